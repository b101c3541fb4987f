package runtime

import "testing"

// TestRecordClassCodes: each class code names its class in recordClasses,
// the order the recording's readers know.
func TestRecordClassCodes(t *testing.T) {
	for code, want := range map[uint8]string{
		classSuccess: "success", classFailure: "failure", classIgnored: "ignored", classInvalid: "invalid",
		classInjected: "injected", classRejected: "rejected", classRateLimited: "rate_limited",
		classThrottled: "throttled", classBulkheadFull: "bulkhead_full", classBudget: "budget", classCanceled: "canceled",
	} {
		if got := recordClasses[code]; got != want {
			t.Errorf("class %d is %q, want %q", code, got, want)
		}
	}
	if len(recordClasses) != classCanceled+1 {
		t.Errorf("%d classes, %d codes", len(recordClasses), classCanceled+1)
	}
}
