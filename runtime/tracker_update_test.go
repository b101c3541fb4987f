package runtime_test

import (
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// TestInFlightLoweredWhileACallRuns: a look made after Update lowers
// InFlight, while a call timed under the old limit runs, must move the
// tracker's due instant down to the new limit, or the call is found
// overdue only at the old one (the merge of the lock-free tracker with
// live Update showed it).
func TestInFlightLoweredWhileACallRuns(t *testing.T) {
	clk := newFakeClock()
	reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	b := reg.Breaker(runtime.Config{Name: "op", FailureThreshold: 1, ResetTimeout: time.Second})
	if err := reg.Update(runtime.Config{Name: "op", SuccessThreshold: 1, WindowCalls: 10, InFlight: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	b.Stats()
	b.Bypass("x")
	_, err := b.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b.Stats()
	if err := reg.Update(runtime.Config{Name: "op", FailureThreshold: 1, InFlight: time.Second}); err != nil {
		t.Fatal(err)
	}
	b.Stats()
	clk.Advance(1001 * time.Millisecond)
	st := b.Stats()
	if st.ConsecutiveFailures != 1 {
		t.Fatalf("the call in flight past the lowered inflight=1s is not counted: %+v", st)
	}
}
