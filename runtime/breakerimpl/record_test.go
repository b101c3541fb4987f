package breakerimpl_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

var errNotFound = errors.New("not found")

// call makes one call through rt as generated code does, the upstream
// taking d and answering err.
func call(ctx context.Context, rt *breakerimpl.Route, d time.Duration, err error) (out error) {
	return callFn(ctx, rt, func() error {
		time.Sleep(d)
		return err
	})
}

func callFn(ctx context.Context, rt *breakerimpl.Route, fn func() error) (out error) {
	c, ok := rt.EnterFast()
	if !ok {
		if c, out = rt.Enter(ctx); out != nil {
			return out
		}
	}
	defer c.Exit(ctx, &out)
	out = breakerimpl.PanicGuard
	return fn()
}

// TestRouteRecordsEveryCall records a generated route's calls: successes
// (an excluded error among them), failures, the rejections after the trip,
// the limiter's refusals and a panic.
func TestRouteRecordsEveryCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
		rt := breakerimpl.NewRoute(reg, struct{}{}, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "tdx", FailureThreshold: 2, ResetTimeout: time.Minute},
			Exclude: []error{errNotFound},
		})
		limited := breakerimpl.NewRoute(reg, struct{}{}, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "sina"}, Rate: 1, Burst: 1, MaxWait: time.Millisecond,
		})
		ctx := context.Background()
		assert.NoError(t, call(ctx, rt, time.Millisecond, nil))
		assert.ErrorIs(t, call(ctx, rt, 0, errNotFound), errNotFound)
		assert.Panics(t, func() { _ = callFn(ctx, rt, func() error { panic("boom") }) })
		assert.Error(t, call(ctx, rt, 3*time.Millisecond, errRoute))
		assert.ErrorIs(t, call(ctx, rt, 0, nil), runtime.ErrOpen)
		assert.NoError(t, call(ctx, limited, 0, nil))
		assert.ErrorIs(t, call(ctx, limited, 0, nil), runtime.ErrRateLimited)
		require.NoError(t, reg.Close())
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		assert.Equal(t, []string{
			"0 1000000 success tdx",
			"1000000 0 success tdx",
			"1000000 0 failure tdx",
			"1000000 3000000 failure tdx",
			"4000000 0 rejected tdx",
			"4000000 0 success sina",
			"4000000 0 rate_limited sina",
			"# end calls=7 dropped=0",
		}, lines[1:])
	})
}

var errRoute = errors.New("upstream down")

// TestRouteRecordsABoundedNumberInFlight holds more calls in flight than
// a route records at once: the one beyond the bound is made, unrecorded,
// and counted as dropped.
func TestRouteRecordsABoundedNumberInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
		rt := breakerimpl.NewRoute(reg, struct{}{}, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "tdx"}})
		release := make(chan struct{})
		const calls = breakerimpl.MaxRecordedInFlight + 1
		errs := make(chan error, calls)
		for range calls {
			go func() {
				errs <- callFn(context.Background(), rt, func() error { <-release; return nil })
			}()
		}
		synctest.Wait() // every call is in flight
		close(release)
		for range calls {
			require.NoError(t, <-errs)
		}
		require.NoError(t, reg.Close())
		assert.Equal(t, &runtime.RecordingHealth{Calls: breakerimpl.MaxRecordedInFlight, Dropped: 1}, reg.Health().Recording)
		assert.Equal(t, breakerimpl.MaxRecordedInFlight, strings.Count(out.String(), " success tdx\n"))
	})
}

// BenchmarkRouteSuccessRecorded is BenchmarkRouteSuccess on a registry
// that records to io.Discard: what recording costs a CLOSED success
// (compare the two in one run).
func BenchmarkRouteSuccessRecorded(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "s"}}, runtime.WithRecorder(io.Discard))
	benchCalls(b, q)
}

// TestKeyedRecordsEveryCall records a keyed route's calls made in the
// generated plain keyed shape (Keyed.EnterFast, Keyed.Exit): each key's
// successes and failures, under the key's breaker's name.
func TestKeyedRecordsEveryCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
		f := breakerimpl.NewFamily(reg, struct{}{}, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "q", FailureThreshold: 5, ResetTimeout: time.Minute},
		}, 10, 0)
		ctx := context.Background()
		keyed := func(key string, fail error) (err error) {
			k := f.Key(key)
			call, ok := k.EnterFast()
			if !ok {
				if err = k.Refusal(call); err != nil {
					return
				}
				if call, err = k.Enter(ctx); err != nil {
					return
				}
			}
			defer func() {
				k.Exit(call, ctx, err, err == breakerimpl.PanicGuard && k.Unreturned(call, ctx, recover()))
				k.Done()
			}()
			err = breakerimpl.PanicGuard
			return fail
		}
		for range 2 { // a key's second call is on a live key: the fast path
			assert.NoError(t, keyed("a", nil))
			assert.NoError(t, keyed("b", nil))
		}
		assert.ErrorIs(t, keyed("a", errRoute), errRoute)
		require.NoError(t, reg.Close())
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		assert.Equal(t, []string{
			"0 0 success q/a",
			"0 0 success q/b",
			"0 0 success q/a",
			"0 0 success q/b",
			"0 0 failure q/a",
			"# end calls=5 dropped=0",
		}, lines[1:])
	})
}
