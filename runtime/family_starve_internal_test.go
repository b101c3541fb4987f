package runtime

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// TestFamilyOutageScansSeldom: in an outage every new key trips and none
// can be dropped (OPEN until its period ends), so the family grows past
// its bound; a scan for victims, which reads every live key, then runs
// once every max(Keys, live)/16 new keys, not for each one (it did: an
// outage's 15,000th key cost 6 ms), and as soon as keys move out of OPEN
// the next new key drops them down to the bound.
func TestFamilyOutageScansSeldom(t *testing.T) {
	synctest.Test(t, outageScansSeldom)
}

func outageScansSeldom(t *testing.T) {
	reg := NewRegistry(WithoutEnv(), WithLogger(slog.New(slog.DiscardHandler)))
	f := reg.Family(Config{Name: "out", FailureThreshold: 1, ResetTimeout: time.Minute}, FamilyConfig{Keys: 100})
	down := errors.New("down")
	const n = 3000
	for i := range n {
		_ = f.Breaker("k"+strconv.Itoa(i)).Do(context.Background(), func(context.Context) error { return down })
	}
	if got := f.Len(); got != n {
		t.Fatalf("%d keys live after %d tripped ones, want all: none may go while OPEN", got, n)
	}
	f.wmu.Lock()
	scans := f.scans
	f.wmu.Unlock()
	// At most two scans (CLOSED, then HALF_OPEN) every max(100, live)/16
	// keys: about 2*16*ln(3000/100) + 2*100/6 for the first 100 past it.
	t.Logf("%d scans for %d new keys past the bound", scans, n-100)
	if scans > 200 {
		t.Errorf("%d scans for %d new keys past the bound, want at most 200", scans, n-100)
	}
	time.Sleep(time.Minute) // every period ends: HALF_OPEN, droppable
	synctest.Wait()
	f.Breaker("after")
	if got := f.Len(); got > 100 {
		t.Errorf("%d keys live after every period ended and a new key came, want the bound, 100", got)
	}
}
