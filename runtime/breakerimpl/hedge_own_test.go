package breakerimpl

import "testing"

// TestRaceOwnedWraps: the count of a race's calls in own wraps below
// ownTimer, so that a race reused 2^31 times is never taken for one the
// timer's goroutine runs, and each call's owned value is the next call's
// caller value.
func TestRaceOwnedWraps(t *testing.T) {
	var r race[int, int, int]
	for _, c := range []uint32{0, 1, ownTimer - 2, ownTimer - 1} {
		r.caller = c
		o := r.owned()
		if o == c || o == ownTimer || o&ownTimer != 0 {
			t.Errorf("caller %d: owned %d", c, o)
		}
	}
	r.caller = ownTimer - 1
	if o := r.owned(); o != 0 {
		t.Errorf("owned after %d is %d, want 0", r.caller, o)
	}
}
