package breakerimpl

import (
	"context"
	"sync"
	"time"

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
var recording words

func init() { recording.state.Store(core.PeriodOne | core.CountFlag) }

// routeRec is the recording state of a route. Its clones are made as
// calls need them, so that a route (a family's key among thousands) costs
// little until it has calls in flight.
type routeRec struct {
	rec   core.Recorder
	clone func() *Route

	mu    sync.Mutex // guards free, made
	free  []*Route   // idle clones
	made  int
	plain *Route // made once: the calls beyond the bound go through it, unrecorded
}

// take returns an idle clone, or a new one, or nil when the bound is
// reached.
func (rr *routeRec) take() *Route {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if n := len(rr.free); n > 0 {
		c := rr.free[n-1]
		rr.free = rr.free[:n-1]
		return c
	}
	if rr.made >= maxRecordedInFlight {
		if rr.plain == nil {
			rr.plain = rr.clone()
			rr.plain.recOf = nil
		}
		return nil
	}
	rr.made++
	return rr.clone()
}

// put returns a clone once its call is recorded.
func (rr *routeRec) put(c *Route) {
	rr.mu.Lock()
	rr.free = append(rr.free, c)
	rr.mu.Unlock()
}

// recordCalls makes rt record its calls when reg records (a route of a nil
// implementation, which refuses every call, does not).
func (rt *Route) recordCalls(reg *runtime.Registry, impl any, cfg RouteConfig, b *runtime.Breaker, l *runtime.Limiter) {
	rec := core.RecorderOf(reg)
	if rec == nil || impl == nil {
		return
	}
	rr := &routeRec{rec: rec}
	answerAs := rt.answerAs // a key's clone counts its answers as its family's
	rr.clone = func() *Route {
		c := new(Route)
		initRoute(c, reg, impl, cfg, b, l, answerAs)
		c.recOf = rr
		if c.inject != nil {
			c.recInject = &recInjector{in: c.inject}
			c.inject = c.recInject
		}
		return c
	}
	rt.rec = rr
	rt.fails = &recording.fails
	rt.timed = 0 // every call goes through a clone (enter)
}

// enter is Route.enter on a recording route: the call goes through a
// clone, and a refused call is recorded here.
func (rr *routeRec) enter(ctx context.Context, kind tryKind) (Call, error) {
	c := rr.take()
	if c == nil {
		rr.rec.Drop()
		return rr.plain.enterTry(ctx, kind)
	}
	// When the call began; Route.enter moves it on to when the call holds
	// its concurrency slot, if it takes one: the breaker times such a
	// call (SlowCall, InFlight) from then, and a recording replays its
	// duration against those rules.
	c.recStart = rr.rec.Now()
	call, err := c.enterTry(ctx, kind)
	if err != nil {
		stage := core.Refused
		if ri := c.recInject; ri != nil {
			stage, ri.stage = ri.stage, core.Refused // as injection settled the call, if it did
		}
		rr.rec.Record(c.breaker, c.recStart, stage, err)
		rr.put(c)
		return call, err
	}
	return call, nil
}

// recInjector is the injection step of a recording clone: it keeps how
// the call it failed was settled (a deadline that cut an injected delay
// short is a failure, the caller's cancel neither), for enter to record.
// A clone serves one call at a time, and so does its recInjector.
type recInjector struct {
	in    core.Injector
	stage core.Stage // of the call Inject failed last; Refused otherwise
}

func (ri *recInjector) Injecting() bool { return true }

func (ri *recInjector) Inject(ctx context.Context, w uint64, timeout time.Duration) (uint64, error) {
	w, stage, err := ri.in.InjectStaged(ctx, w, timeout)
	if err != nil {
		ri.stage = stage
	}
	return w, err
}

func (ri *recInjector) InjectStaged(ctx context.Context, w uint64, timeout time.Duration) (uint64, core.Stage, error) {
	return ri.in.InjectStaged(ctx, w, timeout)
}

// exitRecorded is exitSlow on a recording clone: it settles the call and
// records it as the breaker counted it, and frees the clone. An excluded
// error is a success, a hedge's loser neither, any other error what the
// breaker's classifier says; a classifier that panics ends the call as a
// failure (see runtime's classifyAdmitted), and so it is recorded.
func (c Call) exitRecorded(ctx context.Context, err error) {
	stage := core.Panicked
	defer func() { c.recorded(stage, err) }()
	switch {
	case err == nil || c.route.excluded(err):
		c.route.core.Release(ctx, c.word, nil)
		stage = core.Succeeded
	case lostRace(ctx):
		c.route.core.Ignore(c.word)
		stage = core.Ignored
	default:
		stage = c.route.core.Settled(ctx, c.word, err)
	}
}

// recordInvalid records a call whose answer its valid func rejected.
func (c Call) recordInvalid(ctx context.Context) {
	if c.route.recOf != nil {
		c.recorded(core.Invalid, nil)
	}
}

// settleUnreturned settles a call whose function did not return (see
// core.Breaker.Unreturned), recording it first when it is recorded.
func (c Call) settleUnreturned(v any) {
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
		c.recorded(core.Gone, nil)
		return
	}
	c.recorded(core.Panicked, nil)
}

func (c Call) recorded(stage core.Stage, err error) {
	rt := c.route
	rt.recOf.rec.Record(rt.breaker, rt.recStart, stage, err)
	rt.recOf.put(rt)
}
