package core

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// ops records what the protocol asked of the slow paths.
type ops struct {
	Ops                                 // nil: a call of a method not overridden fails the test by panicking
	settled, ignored, panicked, cleared int
}

func (o *ops) Settle(context.Context, uint64, error) { o.settled++ }
func (o *ops) Failed(context.Context, uint64, error) { o.settled++ }
func (o *ops) Ignore(uint64)                         { o.ignored++ }
func (o *ops) Panicked(uint64, any)                  { o.panicked++ }
func (o *ops) ClearFails(uint64)                     { o.cleared++ }

func newCore() (*Breaker, *ops) {
	o := &ops{}
	return &Breaker{State: new(atomic.Uint64), Fails: new(atomic.Uint64), Ops: o}, o
}

// TestReleaseFastPath: a plain CLOSED success costs a load and touches the
// slow paths only to clear a failure count; everything else is settled.
func TestReleaseFastPath(t *testing.T) {
	b, o := newCore()
	w := uint64(PeriodOne)
	b.Release(context.Background(), w, nil)
	assert.Zero(t, o.cleared+o.settled, "nothing to clear")
	b.Fails.Store(PeriodOne | 2)
	b.Release(context.Background(), w, nil)
	assert.Equal(t, 1, o.cleared)
	b.Release(context.Background(), w, errors.New("down"))
	b.Release(context.Background(), w|CountFlag, nil)
	assert.Equal(t, 2, o.settled, "a failure, and a counted success")
}

// TestUnreturnedPanicRule: a panic is recorded and re-raised; a goroutine
// that exited without returning counts as neither.
func TestUnreturnedPanicRule(t *testing.T) {
	b, o := newCore()
	assert.PanicsWithValue(t, "boom", func() { b.Unreturned(PeriodOne, "boom") })
	assert.Equal(t, 1, o.panicked)
	b.Unreturned(PeriodOne, nil)
	assert.Equal(t, 1, o.ignored)
}

type timer struct{ t *time.Timer }

func (t timer) Stop() bool { return t.t.Stop() }

func afterFunc(d time.Duration, f func()) timer { return timer{time.AfterFunc(d, f)} }

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		assert.True(t, Sleep(context.Background(), time.Second, afterFunc))
		assert.Equal(t, time.Second, time.Since(start), "fake time in the bubble")

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		assert.False(t, Sleep(ctx, time.Hour, afterFunc), "ctx ended first")
	})
}
