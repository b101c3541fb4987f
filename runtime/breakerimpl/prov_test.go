package breakerimpl_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// The generated shapes' provenance is tested end to end (testdata/e2e,
// provenance_test.go); these are the routes' own paths.

// TestInjectedFaultInTheRecord: a try that fault injection failed is a
// try, failed like an upstream's, and the record says so.
func TestInjectedFaultInTheRecord(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "a", Fault: 1}})
	ctx, p := runtime.WithProvenance(context.Background())
	_, err := rt.Enter(ctx)
	require.ErrorIs(t, err, runtime.ErrInjected)
	assert.Equal(t, 1, p.Tries)
	require.Len(t, p.Skipped, 1)
	assert.Equal(t, "a", p.Skipped[0].Source)
	assert.Equal(t, "injected", p.Skipped[0].Why)

	// Given back: a call of another route with the same ctx writes it.
	ok := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "b"}})
	require.NoError(t, callFn(ctx, ok, func() error { return nil }))
	assert.Equal(t, runtime.Provenance{Source: "b", Tries: 1, Skipped: p.Skipped[:0]}, *p)
}

// TestRecordedRouteWritesTheRecord: a route whose registry records its
// calls goes through a clone of itself, which claims and writes the
// record as the route would, and records the call too.
func TestRecordedRouteWritesTheRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Minute}})
		ctx, p := runtime.WithProvenance(context.Background())
		require.NoError(t, callFn(ctx, rt, func() error { return nil }))
		assert.Equal(t, "tdx", p.Source)
		require.ErrorIs(t, callFn(ctx, rt, func() error { return errRoute }), errRoute)
		assert.Equal(t, "none (tdx error)", p.String())
		require.ErrorIs(t, callFn(ctx, rt, func() error { return nil }), runtime.ErrOpen)
		assert.Equal(t, "none (tdx open)", p.String())
		require.NoError(t, reg.Close())
		assert.Contains(t, out.String(), "# end calls=3 dropped=0")
	})
}

// TestDoneShapeRecordsAPanic: the plain wrapper's deferred closure hands a
// panic to Unreturned, which records the call on a recording route (and
// gives its clone back) before it re-raises the panic.
func TestDoneShapeRecordsAPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
		rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "tdx"}})
		w := &guarded{next: panicker{}, route: rt}
		assert.PanicsWithValue(t, "upstream panicked", func() { _, _ = w.Quote(context.Background(), "x") })
		w.next = &upstream{}
		_, err := w.Quote(context.Background(), "x")
		require.NoError(t, err)
		require.NoError(t, reg.Close())
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		assert.Equal(t, []string{"0 0 failure tdx", "0 0 success tdx", "# end calls=2 dropped=0"}, lines[1:])
	})
}

// TestPanickedWithoutCtxStillSettles: Panicked, which wrappers generated
// before Unreturned call, settles the call as before, and a claimed
// record's flag never reaches the breaker.
func TestPanickedWithoutCtxStillSettles(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "old", FailureThreshold: 1, ResetTimeout: time.Minute}})
	ctx, _ := runtime.WithProvenance(context.Background())
	call, err := rt.Enter(ctx)
	require.NoError(t, err)
	assert.PanicsWithValue(t, "boom", func() { call.Panicked("boom") })
	assert.Equal(t, runtime.Open, rt.Breaker().State(), "the panic counted as a failure")
}
