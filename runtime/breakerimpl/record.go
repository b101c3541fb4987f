package breakerimpl

import (
	"context"
	"sync/atomic"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// A route of a registry that records its calls (runtime.WithRecorder)
// must know when each call started, and a Call is two words that the
// fast path copies: it has no room for the start. So such a route hands
// each call a clone of itself, made by the same constructor, that holds
// the start; Exit finds the clone, records the call and returns the
// clone to its route. The route itself reads a state word that is never
// plain CLOSED (recording), so that EnterFast declines and Enter comes
// here; routes of registries that do not record pay nothing.

// maxRecordedInFlight bounds the clones of one route: a call beyond them
// is made unrecorded (and counted as dropped).
const maxRecordedInFlight = 1024

// recording is the state word of a route whose registry records: CLOSED
// with the counting flag, so every call leaves the fast path, never OPEN,
// so Enter does not refuse it before the recorder sees it.
var recording atomic.Uint64

func init() { recording.Store(core.PeriodOne | core.CountFlag) }

// routeRec is the recording state of a route.
type routeRec struct {
	rec   core.Recorder
	free  chan *Route // idle clones
	made  atomic.Int32
	plain *Route // the calls beyond the bound go through it, unrecorded
	clone func() *Route
}

// recordCalls makes rt record its calls when reg records (a route of a nil
// implementation, which refuses every call, does not).
func (rt *Route) recordCalls(reg *runtime.Registry, impl any, cfg RouteConfig, b *runtime.Breaker, l *runtime.Limiter) {
	rec := core.RecorderOf(reg)
	if rec == nil || impl == nil {
		return
	}
	rr := &routeRec{rec: rec, free: make(chan *Route, maxRecordedInFlight)}
	rr.clone = func() *Route {
		c := buildRoute(reg, impl, cfg, b, l)
		c.recOf = rr
		return c
	}
	rr.plain = buildRoute(reg, impl, cfg, b, l)
	rt.rec = rr
	rt.state = &recording
}

// enter is Route.enter on a recording route: the call goes through a
// clone, and a refused call is recorded here.
func (rr *routeRec) enter(ctx context.Context) (Call, error) {
	var c *Route
	select {
	case c = <-rr.free:
	default:
		if rr.made.Add(1) <= maxRecordedInFlight {
			c = rr.clone()
		} else {
			rr.made.Add(-1)
			rr.rec.Drop()
			return rr.plain.Enter(ctx)
		}
	}
	start := rr.rec.Now()
	call, err := c.Enter(ctx)
	if err != nil {
		rr.rec.Record(c.breaker, ctx, start, core.Refused, err)
		rr.free <- c
		return call, err
	}
	c.recStart = start
	return call, nil
}

// recordDone records the call settled by exitSlow with err, and frees
// its clone.
func (c Call) recordDone(ctx context.Context, err error) {
	if c.route.excluded(err) {
		err = nil
	}
	c.recorded(ctx, core.Done, err)
}

// recordInvalid records a call whose answer its valid func rejected.
func (c Call) recordInvalid(ctx context.Context) {
	if c.route.recOf != nil {
		c.recorded(ctx, core.Invalid, nil)
	}
}

// unreturned settles a call whose function did not return (see
// core.Breaker.Unreturned), recording it first when it is recorded.
func (c Call) unreturned(v any) {
	c.recordUnreturned(v)
	c.route.core.Unreturned(c.word, v)
}

// recordUnreturned records a call whose function panicked with v (nil:
// its goroutine exited).
func (c Call) recordUnreturned(v any) {
	if c.route.recOf == nil {
		return
	}
	if v == nil {
		c.recorded(nil, core.Gone, nil)
		return
	}
	c.recorded(nil, core.Panicked, nil)
}

func (c Call) recorded(ctx context.Context, stage core.Stage, err error) {
	rt := c.route
	rt.recOf.rec.Record(rt.breaker, ctx, rt.recStart, stage, err)
	rt.recOf.free <- rt
}
