package breakerimpl_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// eagerClock is an injected clock whose timers fire at once, each in a
// goroutine of its own (as [runtime.Clock] says AfterFunc calls f), and
// whose AfterFunc returns the Timer only after f has started and run as far
// as it can: the goroutine signals (started) before it calls f, and
// AfterFunc then waits, with synctest.Wait, until every other goroutine of
// the bubble is blocked. It is the worst order a clock may give within its
// contract: f runs before the caller of AfterFunc has the Timer. Its timers
// have always fired, so Stop reports false. Used inside a synctest bubble
// only, and by one goroutine at a time (two synctest.Waits at once panic):
// the chains tested here have one fallback, so a call arms once.
type eagerClock struct{ fired atomic.Int64 }

func (c *eagerClock) Now() time.Time { return time.Now() }

func (c *eagerClock) AfterFunc(_ time.Duration, f func()) runtime.Timer {
	started := make(chan struct{})
	go func() {
		c.fired.Add(1)
		close(started)
		f()
	}()
	<-started
	synctest.Wait() // f has gone as far as it can
	return eagerTimer{}
}

type eagerTimer struct{}

func (eagerTimer) Stop() bool { return false } // it fired when it was made

// syncClock is a clock whose AfterFunc calls f itself, before it returns:
// outside the [runtime.Clock] contract (f runs in its own goroutine), but
// the hedge timer must not hang on it either (see race.armClock).
type syncClock struct{ fired atomic.Int64 }

func (c *syncClock) Now() time.Time { return time.Now() }

func (c *syncClock) AfterFunc(_ time.Duration, f func()) runtime.Timer {
	c.fired.Add(1)
	f()
	return eagerTimer{}
}

// firingClock is a clock that counts the timers it fired.
type firingClock interface {
	runtime.Clock
	firedTimers() int64
}

func (c *eagerClock) firedTimers() int64 { return c.fired.Load() }
func (c *syncClock) firedTimers() int64  { return c.fired.Load() }

// TestHedgeInjectedClockFiringBeforeAfterFuncReturns: with an injected
// clock whose timer fires, and whose func takes the race over, before
// AfterFunc has returned the Timer, a hedged call still gets its answer,
// from the backup or from the primary, and returns. arm stored the Timer
// only once AfterFunc returned: by then the timer's goroutine had asked the
// backup and, no source being left to hedge with, set the race's timer to
// nil; the late store put back a timer that had fired, and once an answer
// won the loop stopped it, counted its tick as pending and waited for it
// for ever, the caller waiting on the loop (synctest reports the deadlock).
// A clock that calls f synchronously inside AfterFunc (syncClock) hung the
// caller too: the timer's func, run on the caller's goroutine, took the
// race over and waited for the primary's answer, which that goroutine was
// to give.
func TestHedgeInjectedClockFiringBeforeAfterFuncReturns(t *testing.T) {
	clocks := []struct {
		name string
		new  func() firingClock
	}{
		{"eager", func() firingClock { return &eagerClock{} }},
		{"synchronous", func() firingClock { return &syncClock{} }},
	}
	cases := []struct {
		name              string
		emDelay, sinaWait time.Duration
		want              int
		source, loser     string
	}{
		{"backup wins", time.Hour, d, 2, "fallback:sina", "eastmoney"},
		{"primary wins", d / 2, d, 1, "eastmoney", "fallback:sina"},
	}
	for _, ck := range clocks {
		for _, tc := range cases {
			t.Run(ck.name+" clock/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					clock := ck.new()
					reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv(),
						runtime.WithCallCounts(), runtime.WithClock(clock))
					em := &source{name: "eastmoney", delay: tc.emDelay, v: 1}
					sina := &source{name: "sina", delay: tc.sinaWait, v: 2}
					h := newHedgedChainOn(reg, breakerimpl.RouteConfig{Hedge: d}, em, sina)
					ctx, p := runtime.WithProvenance(context.Background())
					v, err := h.argsCall(ctx, 0)
					require.NoError(t, err)
					assert.Equal(t, tc.want, v)
					assert.Equal(t, tc.source, p.Source)
					assert.True(t, p.Hedged, "the backup was asked at once, the primary in flight")
					assert.Equal(t, []runtime.Skip{{Source: tc.loser, Why: "slow"}}, p.Skipped)
					assert.Equal(t, []time.Duration{0}, sina.askedAt(), "asked when the timer fired")
					assert.Equal(t, int64(1), clock.firedTimers(), "armed once: no source left to hedge with")
					synctest.Wait() // nothing of the call is left running
					for _, u := range h.sources {
						u.mu.Lock()
						assert.Equal(t, 1, u.returned, "%s returned", u.name)
						u.mu.Unlock()
					}
				})
			})
		}
	}
}
