package breakerimpl_test

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEnterFast: EnterFast admits exactly the calls that need nothing but
// a CLOSED breaker, and declines every other, leaving the decision to
// Enter; what it admits settles through Exit like any call.
func TestEnterFast(t *testing.T) {
	defer breakerimpl.ForgetCallStates()()
	reg, clk := newTestRegistry(t)
	cfg := runtime.Config{Name: "fast", FailureThreshold: 2, ResetTimeout: 10}
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: cfg})
	ctx := context.Background()

	exit := func(call breakerimpl.Call, err error) { call.Exit(ctx, &err) }
	call, ok := rt.EnterFast()
	require.True(t, ok, "a CLOSED breaker with no limiter, budget or provenance in play")
	exit(call, errUpstream)
	assert.Equal(t, 1, rt.Breaker().Stats().ConsecutiveFailures, "its outcome counts")
	call, ok = rt.EnterFast()
	require.True(t, ok)
	exit(call, nil)
	assert.Zero(t, rt.Breaker().Stats().ConsecutiveFailures, "a success clears the count")

	limited := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "limited"}, Rate: 1, Burst: 1})
	_, ok = limited.EnterFast()
	assert.False(t, ok, "a call that must wait for a token")

	trip(t, rt.Breaker())
	_, ok = rt.EnterFast()
	assert.False(t, ok, "OPEN")
	clk.Advance(10)
	require.Equal(t, runtime.HalfOpen, rt.Breaker().State())
	_, ok = rt.EnterFast()
	assert.False(t, ok, "HALF_OPEN: a probe needs a slot")
	call, err := rt.Enter(ctx)
	require.NoError(t, err)
	exit(call, nil)
	require.Equal(t, runtime.Closed, rt.Breaker().State())

	_ = runtime.WithBudget(ctx, 1) // from now on every call may carry one
	_, ok = rt.EnterFast()
	assert.False(t, ok, "budgets are in use: Enter must look in the ctx")
	_, err = rt.Enter(runtime.WithBudget(ctx, 0))
	assert.True(t, errors.Is(err, runtime.ErrBudget), "and Enter does: %v", err)
}

// TestEnterFastInlines: EnterFast (and Done, on the way out) is only worth
// its place in generated code if the compiler inlines it; a change that
// pushes it over the inlining budget would slow every wrapper silently, so
// it fails here instead. The same holds for what a chain's primary calls
// on its way in.
//
// Only on 64-bit CPUs: on a 32-bit one each operation on the 64-bit state
// word is several instructions, and these go over the inliner's budget
// (SPEC §7's costs are measured on 64-bit CPUs).
func TestEnterFastInlines(t *testing.T) {
	if bits.UintSize != 64 {
		t.Skipf("on %s, a 32-bit CPU, the fast path is not inlined: see the comment", goruntime.GOARCH)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("missing component: go (the go command on PATH)")
	}
	out, err := exec.Command(goBin, "build", "-gcflags=-m", "-o", os.DevNull, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, fn := range []string{"(*Route).EnterFast", "Call.Refusal", "Call.Done", "(*Retry).EnterFast", "(*Chain).Start", "(*Retry).Again", "(*Chain).Primary", "(*Chain).PrimaryValid"} {
		if !strings.Contains(string(out), "can inline "+fn+"\n") {
			t.Errorf("%s does not inline; the compiler says:\n%s", fn, grepLines(string(out), fn))
		}
	}
}

// TestRouteCountsRejections: without call counting, a route's refusals
// are counted in the breaker's Stats whichever way the wrapper meets the
// OPEN breaker: EnterFast then Refusal (a generated wrapper's rejection
// path), Enter, and Enter with a provenance record in play; the route of
// a nil implementation counts nothing against any breaker.
func TestRouteCountsRejections(t *testing.T) {
	defer breakerimpl.ForgetCallStates()()
	reg, _ := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "r", FailureThreshold: 1}})
	q := &guarded{next: &upstream{}, route: rt}
	ctx := context.Background()
	trip(t, rt.Breaker())
	for range 5 {
		_, err := q.Quote(ctx, "600519")
		require.ErrorIs(t, err, runtime.ErrOpen)
	}
	assert.Equal(t, uint64(5), rt.Breaker().Stats().Rejections, "EnterFast, Refusal")
	_, err := rt.Enter(ctx)
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Equal(t, uint64(6), rt.Breaker().Stats().Rejections, "Enter")
	pctx, _ := runtime.WithProvenance(ctx)
	_, err = rt.Enter(pctx)
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Equal(t, uint64(7), rt.Breaker().Stats().Rejections, "Enter, a provenance record in play")

	nilRoute := breakerimpl.NewRoute(reg, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "n"}})
	_, err = (&guarded{next: &upstream{}, route: nilRoute}).Quote(ctx, "600519")
	require.ErrorIs(t, err, breakerimpl.ErrNilImpl)
	assert.Zero(t, nilRoute.Breaker().Stats().Rejections, "a nil implementation is not the breaker's refusal")
	assert.False(t, rt.Breaker().Stats().Counted)
}

// TestDoneOutcomes: the plain wrapper's deferred Done (the guarded test
// wrapper has its shape) counts a success, a failure and a panic, which it
// re-raises, frees a probe's slot on each, and counts a Goexit as neither.
func TestDoneOutcomes(t *testing.T) {
	reg, clk := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "d", FailureThreshold: 2, ResetTimeout: time.Second}})
	ctx := context.Background()
	quote := func(p quoter) (v any, err error) {
		done := make(chan struct{})
		go func() { // a goroutine of its own: Goexit ends it
			defer close(done)
			defer func() { v = recover() }()
			_, err = (&guarded{next: p, route: rt}).Quote(ctx, "600519")
		}()
		<-done
		return v, err
	}

	_, err := quote(&upstream{err: errUpstream})
	require.ErrorIs(t, err, errUpstream)
	_, err = quote(&upstream{})
	require.NoError(t, err)
	assert.Zero(t, rt.Breaker().Stats().ConsecutiveFailures, "the success cleared the failure")

	v, _ := quote(panicker{})
	assert.Equal(t, "upstream panicked", v, "re-raised")
	assert.Equal(t, uint64(2), rt.Breaker().Stats().Failures, "the failure and the panic")

	v, _ = quote(panicker{goexit: true})
	assert.Nil(t, v, "a Goexit is no panic")
	assert.Equal(t, uint64(1), rt.Breaker().Stats().Ignored, "and counts as neither")

	trip(t, rt.Breaker())
	clk.Advance(time.Second)
	for _, p := range []quoter{panicker{goexit: true}, panicker{}} {
		_, _ = quote(p)
		assert.Zero(t, rt.Breaker().Stats().ProbesInFlight, "the probe's slot is free after goexit=%v", p)
	}
	assert.Equal(t, runtime.Open, rt.Breaker().State(), "the panicking probe re-opened the breaker")
}

// TestFailsWord: Done reads a breaker's consecutive failures as the one
// word of its atomic.Uint64 (failsWord); that type holds nothing else.
func TestFailsWord(t *testing.T) {
	var fails atomic.Uint64
	assert.Equal(t, uintptr(8), unsafe.Sizeof(fails))
	fails.Store(1<<32 | 3)
	assert.Equal(t, uint64(1<<32|3), *breakerimpl.FailsWord(&fails))
}

func grepLines(s, sub string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}

func TestRouteExcluded(t *testing.T) {
	reg, _ := newTestRegistry(t)
	notFound := errors.New("not found")
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "x"}, Exclude: []error{notFound}})
	assert.True(t, rt.Excluded(fmt.Errorf("quote: %w", notFound)))
	assert.False(t, rt.Excluded(nil))
	assert.False(t, rt.Excluded(errors.New("down")))
}

func TestExitValidInvalidCountsAsNeither(t *testing.T) {
	reg, clk := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "v", FailureThreshold: 1, ResetTimeout: time.Second}})
	ctx := context.Background()
	get := func(v int, callErr error) (r int, err error) {
		call, err := rt.Enter(ctx)
		if err != nil {
			return 0, err
		}
		valid := true
		defer call.ExitValid(ctx, &err, &valid)
		err = breakerimpl.PanicGuard
		r, err = v, callErr
		valid = err != nil || r > 0
		return
	}
	_, err := get(0, nil)
	require.NoError(t, err)
	st := rt.Breaker().Stats()
	assert.Equal(t, uint64(1), st.Ignored)
	assert.Equal(t, runtime.Closed, st.State)

	trip(t, rt.Breaker())
	clk.Advance(time.Second)
	_, err = get(0, nil) // an invalid probe frees its slot, keeps HALF_OPEN
	require.NoError(t, err)
	assert.Equal(t, runtime.HalfOpen, rt.Breaker().State())
	assert.Equal(t, 0, rt.Breaker().Stats().ProbesInFlight)
	_, err = get(5, nil)
	require.NoError(t, err)
	assert.Equal(t, runtime.Closed, rt.Breaker().State())
	_, err = get(0, errors.New("down"))
	assert.Error(t, err)
	assert.Equal(t, runtime.Open, rt.Breaker().State())
}

func TestRouteLimiterRefusalFreesSlotAndCountsNeither(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()))
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "em", FailureThreshold: 1, ResetTimeout: time.Second},
			Rate:    0.25, Burst: 1, MaxWait: 100 * time.Millisecond, // a token every 4s
		})
		b := rt.Breaker()
		require.True(t, rt.Limiter().Allow()) // the only token
		trip(t, b)
		time.Sleep(time.Second)
		require.Equal(t, runtime.HalfOpen, b.State())
		_, err := rt.Enter(context.Background()) // probe admitted, no token within maxwait
		require.ErrorIs(t, err, runtime.ErrRateLimited)
		st := b.Stats()
		assert.Equal(t, 0, st.ProbesInFlight, "the refused call freed its probe slot")
		assert.Equal(t, uint64(1), st.RateLimited)
		assert.Equal(t, runtime.HalfOpen, st.State, "a refusal is neither success nor failure")
	})
}

// TestProbeWindow: a probe may run for the longest timeout of the routes
// through its breaker when that is longer than the reset window.
func TestProbeWindow(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
	cfg := runtime.Config{Name: "tdx", ResetTimeout: 30 * time.Second}
	b := reg.Breaker(cfg)
	assert.Equal(t, 30*time.Second, b.ProbeWindow(), "no route: the reset window")
	for _, tt := range []struct{ timeout, want time.Duration }{
		{10 * time.Second, 30 * time.Second}, // shorter than the reset window
		{2 * time.Minute, 2 * time.Minute},
		{time.Minute, 2 * time.Minute}, // the longest so far stays
	} {
		breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: cfg, Timeout: tt.timeout})
		assert.Equal(t, tt.want, b.ProbeWindow(), "after a route with timeout %s", tt.timeout)
	}
}

// blocked is an upstream whose calls stay in flight until release is
// closed.
type blocked struct{ release chan struct{} }

func (u *blocked) Quote(ctx context.Context, code string) (int, error) {
	<-u.release
	return 1, nil
}

// half is a rand.Source whose every Float64 draw is 0.5.
type half struct{}

func (half) Uint64() uint64 { return 1 << 52 } // Float64 keeps the low 53 bits

// TestRouteFollowsUpdate: a route keeps short cuts of its breaker's shape
// at creation (a time window's lock-free success count, a bulkhead's
// slots taken without the breaker); once Registry.Update changes the
// shape, its calls follow the new one: timed for InFlight, throttled, and
// every slot given back.
func TestRouteFollowsUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRand(rand.New(half{})))
		ctx := context.Background()

		tw := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "tw", WindowPeriod: 10 * time.Second, FailureThreshold: 1}})
		_, err := (&guarded{next: &upstream{}, route: tw}).Quote(ctx, "600519")
		require.NoError(t, err)
		require.NoError(t, reg.Update(runtime.Config{Name: "tw", InFlight: time.Second}))
		up := &blocked{release: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			_, err := (&guarded{next: up, route: tw}).Quote(ctx, "600519")
			done <- err
		}()
		synctest.Wait()
		time.Sleep(2 * time.Second)
		assert.Equal(t, runtime.Open, tw.Breaker().State(), "the call through the route made before is timed")
		close(up.release)
		require.NoError(t, <-done)

		bh := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "bh", Concurrency: 1, FailureThreshold: 100}})
		q := &guarded{next: &upstream{err: errors.New("down")}, route: bh}
		require.NoError(t, reg.Update(runtime.Config{Name: "bh", Throttle: 1}))
		for i := range 2 {
			_, err := q.Quote(ctx, "600519")
			require.EqualError(t, err, "down", "call %d: probability %d/%d", i, i, i+1)
		}
		_, err = q.Quote(ctx, "600519")
		require.ErrorIs(t, err, runtime.ErrThrottled, "2/3 > the draw")
		st := bh.Breaker().Stats()
		assert.Zero(t, st.InFlight, "every slot given back")
		assert.Equal(t, uint64(1), st.Throttled)
	})
}

// timed is what breakergen generates for quoter with a route that has a
// timeout: the route's deadline is added to the ctx the method gets.
type timed struct {
	next  quoter
	route *breakerimpl.Route
}

func (w *timed) Quote(ctx context.Context, code string) (_ int, err error) {
	call, ok := w.route.EnterFast()
	if !ok {
		if err = call.Refusal(); err != nil {
			return
		}
		if call, err = w.route.Enter(ctx); err != nil {
			return
		}
	}
	defer call.Exit(ctx, &err)
	ctx, cancel := context.WithTimeout(ctx, w.route.Timeout())
	defer cancel()
	err = breakerimpl.PanicGuard
	return w.next.Quote(ctx, code)
}

// untilDone is an upstream that answers only when its ctx ends.
type untilDone struct{}

func (untilDone) Quote(ctx context.Context, code string) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

// TestBypassKeepsTheRouteLimits: SPEC §14, bypassing the breaker never
// lifts a rate limit, a timeout or a bulkhead: a BYPASSED route's calls
// still get the route's deadline, wait for a slot and a token, and are
// refused when they cannot have one, and the breaker never trips.
func TestBypassKeepsTheRouteLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "em", FailureThreshold: 1, Concurrency: 1},
			Rate:    1, Burst: 2, MaxWait: 10 * time.Millisecond, Timeout: time.Second,
		})
		rt.Breaker().Bypass("watching by hand")
		ctx := context.Background()

		start := time.Now()
		held := make(chan error, 1)
		go func() {
			_, err := (&timed{next: untilDone{}, route: rt}).Quote(ctx, "600519")
			held <- err
		}()
		synctest.Wait()
		fast := &timed{next: &upstream{}, route: rt}
		_, err := fast.Quote(ctx, "600519")
		require.ErrorIs(t, err, runtime.ErrBulkheadFull, "the one slot is taken")

		require.ErrorIs(t, <-held, context.DeadlineExceeded, "the route's timeout ended the call")
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, runtime.Bypassed, rt.Breaker().State(), "a failure, and no trip")

		for i := range 2 {
			_, err = fast.Quote(ctx, "600519")
			require.NoError(t, err, "token %d of the burst", i)
		}
		_, err = fast.Quote(ctx, "600519")
		require.ErrorIs(t, err, runtime.ErrRateLimited, "the next token comes after maxwait")
		st := rt.Breaker().Stats()
		assert.Equal(t, uint64(1), st.BulkheadFull)
		assert.Equal(t, uint64(1), st.Failures)
		assert.Equal(t, runtime.Bypassed, st.State)
	})
}

// cooldownError asks for a cooldown, as an upstream's 429 with a
// Retry-After does.
type cooldownError struct{ d time.Duration }

func (e cooldownError) Error() string             { return "slow down" }
func (e cooldownError) RetryAfter() time.Duration { return e.d }

// TestFailedTheShortWay: a plain wrapper's failing call settles the short
// way (core.Ops.Failed) when only a failure can come of it, and leaves
// every other call to the long way. Either way it counts as the long way
// counts it, here the runtime's own Acquire and Release on a breaker of
// the same settings: the totals, the consecutive failures, the last
// failure, the trip and its reason, a cooldown, a classifier's verdict, a
// cancel, a window's rate.
func TestFailedTheShortWay(t *testing.T) {
	boom, notMine := errors.New("boom"), errors.New("not mine")
	classify := runtime.WithClassifier("classified", func(_ context.Context, err error) runtime.Outcome {
		if errors.Is(err, notMine) {
			return runtime.Ignored
		}
		return runtime.Failure
	})
	type step struct {
		err      error
		canceled bool // the caller's ctx has ended
	}
	for _, tc := range []struct {
		name  string
		cfg   runtime.Config
		steps []step
	}{
		{"threshold", runtime.Config{FailureThreshold: 3},
			[]step{{err: boom}, {err: boom}, {}, {err: boom}, {err: boom}, {err: fmt.Errorf("quote: %w", boom)}}},
		{"classified", runtime.Config{FailureThreshold: 2},
			[]step{{err: notMine}, {err: notMine}, {err: notMine}, {err: boom}, {err: boom}}},
		{"canceled", runtime.Config{FailureThreshold: 2},
			[]step{{err: context.Canceled, canceled: true}, {err: context.Canceled, canceled: true}, {err: boom, canceled: true}, {err: boom}}},
		{"cooldown", runtime.Config{FailureThreshold: 5},
			[]step{{err: boom}, {err: cooldownError{30 * time.Second}}}},
		{"window", runtime.Config{WindowCalls: 10, FailureRate: 0.5, MinimumCalls: 4},
			[]step{{}, {err: boom}, {}, {err: boom}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Name, cfg.ResetTimeout = tc.name, time.Minute
			short, shortClock := newTestRegistry(t, classify)
			long, longClock := newTestRegistry(t, classify)
			rt := breakerimpl.NewRoute(short, anyImpl, breakerimpl.RouteConfig{Breaker: cfg})
			b := long.Breaker(cfg)
			for i, s := range tc.steps {
				ctx, cancel := context.WithCancel(context.Background())
				if s.canceled {
					cancel()
				}
				_, err := (&guarded{next: &upstream{err: s.err}, route: rt}).Quote(ctx, "600519")
				require.ErrorIs(t, err, s.err)
				tok, err := b.Acquire(ctx)
				require.NoError(t, err)
				b.Release(tok, s.err)
				cancel()

				require.Equal(t, b.Stats(), rt.Breaker().Stats(), "after step %d", i)
				require.Equal(t, reasons(long), reasons(short), "after step %d", i)
				shortClock.Advance(time.Second)
				longClock.Advance(time.Second)
			}
			assert.Equal(t, runtime.Open, b.State(), "each case ends in a trip")
		})
	}
}

// reasons returns the reasons of reg's transitions, newest first.
func reasons(reg *runtime.Registry) []string {
	var rs []string
	for _, e := range reg.Events(0) {
		rs = append(rs, e.Reason)
	}
	return rs
}

// quoteFunc is an implementation of a func type: a nil one panics when
// called.
type quoteFunc func(ctx context.Context, code string) (int, error)

func (f quoteFunc) Quote(ctx context.Context, code string) (int, error) { return f(ctx, code) }

// TestTypedNilImplRefuses: an implementation that is a nil pointer (a var
// db *sql.DB never assigned), func, map, chan or slice inside the
// interface is refused with ErrNilImpl, as the nil interface is, by a
// route and by a family, and never reaches the breaker; a non-nil value
// of those kinds, and a zero struct, are called.
func TestTypedNilImplRefuses(t *testing.T) {
	reg, _ := newTestRegistry(t)
	ctx := context.Background()
	for i, impl := range []any{(*upstream)(nil), quoteFunc(nil), map[string]int(nil), (chan int)(nil), []int(nil)} {
		name := fmt.Sprintf("typed%d", i)
		rt := breakerimpl.NewRoute(reg, impl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: name}})
		_, err := (&guarded{next: &upstream{}, route: rt}).Quote(ctx, "600519")
		require.ErrorIs(t, err, breakerimpl.ErrNilImpl, "%T", impl)
		assert.Zero(t, rt.Breaker().Stats().Rejections, "%T: not the breaker's refusal", impl)

		f := breakerimpl.NewFamily(reg, impl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: name + "f"}}, 0, 0)
		_, err = (&keyedGuarded{next: &upstream{}, family: f}).Quote(ctx, "k")
		require.ErrorIs(t, err, breakerimpl.ErrNilImpl, "%T in a family", impl)
	}
	for i, impl := range []any{&upstream{}, quoteFunc(func(context.Context, string) (int, error) { return 1, nil }), map[string]int{}, struct{}{}, 0} {
		rt := breakerimpl.NewRoute(reg, impl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: fmt.Sprintf("live%d", i)}})
		_, err := (&guarded{next: &upstream{}, route: rt}).Quote(ctx, "600519")
		require.NoError(t, err, "%T", impl)
	}
}
