package breakerimpl_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/breakergen/breakergen/runtime/internal/testkit"
)

// TestRouteRecordsTheLiveVerdict makes generated routes' calls end every
// way whose outcome the breaker decides (a deadline, a cancel, injected
// latency cut short, an excluded error, a classifier, a hedge's loser
// that answers an error of its own once cancelled) and checks that each
// recorded class is what the breaker counted: sim replays the class.
func TestRouteRecordsTheLiveVerdict(t *testing.T) {
	errReset := errors.New("connection reset by peer")
	classify := func(ctx context.Context, err error) runtime.Outcome {
		if errors.Is(err, errRoute) {
			return runtime.Ignored
		}
		return runtime.Failure
	}
	waitCtx := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	deadline, canceled := testkit.Deadline, testkit.Canceled
	type routeCall struct {
		name  string
		cfg   breakerimpl.RouteConfig
		ctx   func() (context.Context, context.CancelFunc)
		fn    func(ctx context.Context) error
		class string
	}
	for _, tc := range []routeCall{
		{"the upstream's deadline", breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "plain"}}, deadline, waitCtx, "failure"},
		{"the caller's cancel", breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "plain"}}, canceled, waitCtx, "ignored"},
		{"an excluded error", breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "plain"}, Exclude: []error{errNotFound}},
			deadline, func(context.Context) error { return errNotFound }, "success"},
		{"injected latency cut by the deadline", breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "lat"}}, deadline, waitCtx, "failure"},
		{"injected latency cut by a cancel", breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "lat"}}, canceled, waitCtx, "canceled"},
		{"a classifier's neither", breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "cls"}},
			deadline, func(context.Context) error { return errRoute }, "ignored"},
		{"a classifier's failure on a cancel", breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "cls"}}, canceled, waitCtx, "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out bytes.Buffer
				reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out),
					runtime.WithConfig(runtime.Config{Name: "lat", Latency: time.Second}),
					runtime.WithClassifier("cls", classify))
				rt := breakerimpl.NewRoute(reg, struct{}{}, tc.cfg)
				before := rt.Breaker().Stats()
				ctx, cancel := tc.ctx()
				_ = callFn(ctx, rt, func() error { return tc.fn(ctx) })
				cancel()
				live := testkit.Verdict(before, rt.Breaker().Stats())
				require.NoError(t, reg.Close())
				lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
				require.Len(t, lines, 3, out.String())
				f := strings.Fields(lines[1])
				require.Len(t, f, 4, lines[1])
				assert.Equal(t, tc.class, f[2], lines[1])
				assert.Equal(t, live, testkit.ClassVerdict(f[2]), "the live breaker counted %s; the recording says %s", live, f[2])
			})
		})
	}
	t.Run("a hedge's loser", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var out bytes.Buffer
			reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
			em := &source{name: "eastmoney", delay: 3 * d / 2, v: 1}
			sina := &source{name: "sina", delay: time.Hour, v: 2, lateErr: errReset} // answers an error of its own when cancelled
			h := newHedgedChainOn(reg, breakerimpl.RouteConfig{Hedge: d}, em, sina)
			before := stats(h, "fallback:sina")
			v, err := h.call(context.Background())
			require.NoError(t, err)
			require.Equal(t, 1, v)
			synctest.Wait()
			live := testkit.Verdict(before, stats(h, "fallback:sina"))
			require.NoError(t, reg.Close())
			assert.Equal(t, "neither", live, "a hedge's loser counts as neither")
			assert.Contains(t, out.String(), " 150000000 success eastmoney\n")
			assert.Contains(t, out.String(), " 50000000 ignored fallback:sina\n", "recorded as the breaker counted it")
		})
	})
}

// TestRouteRecordsACallFromItsSlot: a call that waited for a concurrency
// slot is recorded from when it held it, as the breaker times it for
// SlowCall and InFlight (a generated route's and Breaker.Do's); a
// recording that counted the wait made sim see slow calls the live
// breaker never saw.
func TestRouteRecordsACallFromItsSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
		cfg := runtime.Config{Name: "tdx", Concurrency: 1, WindowCalls: 10, MinimumCalls: 1, SlowCall: 150 * time.Millisecond, SlowRate: 0.01}
		rt := breakerimpl.NewRoute(reg, struct{}{}, breakerimpl.RouteConfig{Breaker: cfg, MaxWait: time.Second})
		b := reg.Breaker(runtime.Config{Name: "do", Concurrency: 1})
		var wg sync.WaitGroup
		route := func() { assert.NoError(t, call(context.Background(), rt, 100*time.Millisecond, nil)) }
		do := func() {
			assert.NoError(t, b.Do(context.Background(), func(context.Context) error { time.Sleep(100 * time.Millisecond); return nil }))
		}
		wg.Go(route)
		wg.Go(do)
		time.Sleep(30 * time.Millisecond)
		wg.Go(route) // waits 70ms for the slot
		wg.Go(do)    // so does this one
		wg.Wait()
		st := rt.Breaker().Stats()
		assert.Equal(t, runtime.Closed, st.State)
		assert.Zero(t, st.WindowSlow, "the live breaker saw no slow call")
		require.NoError(t, reg.Close())
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		slices.Sort(lines[1:]) // the calls of one instant end in any order
		assert.Equal(t, []string{
			"# end calls=4 dropped=0",
			"0 100000000 success do",
			"0 100000000 success tdx",
			"100000000 100000000 success do",
			"100000000 100000000 success tdx",
		}, lines[1:])
	})
}
