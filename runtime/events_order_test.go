package runtime_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/breakergen/breakergen/runtime"
)

// TestEventTimesFollowTheLog: the event log, newest first, has times that
// never go forward, under a storm of transitions from many goroutines on
// many breakers. A transition used to read the clock before it took the
// log's lock, so a goroutine preempted between the two logged an older
// time after newer events (an operator review saw inversions of up to
// 30 ms in every run); the log stamps each event as it takes it now.
//
// The breakers are a family's keys with a maxopen share, so that the
// events of trips it keeps CLOSED (CLOSED → CLOSED, logged but not a
// transition) are among them: they were stamped early too.
func TestEventTimesFollowTheLog(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithEventCapacity(20000))
	f := reg.Family(runtime.Config{Name: "s", FailureThreshold: 1}, runtime.FamilyConfig{Keys: 100, MaxOpen: 50})
	var bs []*runtime.Breaker
	for i := range 20 {
		bs = append(bs, f.Breaker(strconv.Itoa(i)))
	}
	down := errors.New("down")
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				b := bs[(g+i)%len(bs)]
				_ = b.Do(context.Background(), func(context.Context) error { return down })
				if i%3 == 0 {
					b.Resume("again") // OPEN → CLOSED; the others stay OPEN a while, and maxopen keeps trips CLOSED
				}
			}
		})
	}
	wg.Wait()
	evs := reg.Events(20000)
	kept := 0
	for _, ev := range evs {
		if ev.From == ev.To {
			kept++
		}
	}
	if len(evs) < 1000 || kept == 0 {
		t.Fatalf("only %d events, %d of kept-CLOSED trips", len(evs), kept)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Time.After(evs[i-1].Time) {
			t.Fatalf("events not newest first at %d of %d: %s at %s, after %s at %s (%s later)", i, len(evs),
				evs[i].Source, evs[i].Time.Format("15:04:05.000000"), evs[i-1].Source, evs[i-1].Time.Format("15:04:05.000000"),
				evs[i].Time.Sub(evs[i-1].Time))
		}
	}
}
