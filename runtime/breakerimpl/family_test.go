package breakerimpl_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// keyedGuarded is what breakergen generates for quoter with key=code.
type keyedGuarded struct {
	next   quoter
	family *breakerimpl.Family
}

func (w *keyedGuarded) Quote(ctx context.Context, code string) (_ int, err error) {
	if w.next == nil {
		err = breakerimpl.ErrNilImpl
		return
	}
	k := w.family.Key(code)
	defer k.Done()
	call, ok := k.Route.EnterFast()
	if !ok {
		if call, err = k.Route.Enter(ctx); err != nil {
			return
		}
	}
	defer call.Exit(ctx, &err)
	err = breakerimpl.PanicGuard
	return w.next.Quote(ctx, code)
}

// keyedInt is the same keyed by an integer parameter.
type keyedInt struct {
	next   *upstream
	family *breakerimpl.Family
}

func (w *keyedInt) Quote(ctx context.Context, id int) (_ int, err error) {
	k := w.family.KeyInt(int64(id))
	defer k.Done()
	call, ok := k.Route.EnterFast()
	if !ok {
		if call, err = k.Route.Enter(ctx); err != nil {
			return
		}
	}
	defer call.Exit(ctx, &err)
	err = breakerimpl.PanicGuard
	return w.next.Quote(ctx, "")
}

type switchable struct{ down map[string]bool }

func (s *switchable) Quote(ctx context.Context, code string) (int, error) {
	if s.down[code] {
		return 0, errUpstream
	}
	return 1, nil
}

func TestFamilyTripsOneKeyAlone(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	up := &switchable{down: map[string]bool{"bad": true}}
	w := &keyedGuarded{next: up, family: breakerimpl.NewFamily(reg, up, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "quote", FailureThreshold: 2}}, 0, 0)}
	ctx := context.Background()
	for range 2 {
		_, err := w.Quote(ctx, "bad")
		require.ErrorIs(t, err, errUpstream)
	}
	_, err := w.Quote(ctx, "bad")
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Contains(t, err.Error(), "quote/bad")
	v, err := w.Quote(ctx, "good")
	require.NoError(t, err)
	assert.Equal(t, 1, v)
}

func TestFamilyNilImplRefuses(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	w := &keyedGuarded{next: &upstream{}, family: breakerimpl.NewFamily(reg, nil, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "n"}}, 0, 0)}
	_, err := w.Quote(context.Background(), "k")
	require.ErrorIs(t, err, breakerimpl.ErrNilImpl)
}

func TestFamilyKeyedSuccessAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	up := &upstream{}
	cfg := breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "a"}}
	ws := &keyedGuarded{next: up, family: breakerimpl.NewFamily(reg, up, cfg, 0, 0)}
	wi := &keyedInt{next: up, family: breakerimpl.NewFamily(reg, up, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "i"}}, 0, 0)}
	ctx := context.Background()
	ws.Quote(ctx, "600519")
	wi.Quote(ctx, 600519)
	assert.Zero(t, testing.AllocsPerRun(100, func() { ws.Quote(ctx, "600519") }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { wi.Quote(ctx, 600519) }))
}

// liveKeys is the number of keys the keyed benchmarks keep live.
const liveKeys = 10_000

func benchKeys() []string {
	keys := make([]string, liveKeys)
	for i := range keys {
		keys[i] = strconv.Itoa(600000 + i)
	}
	return keys
}

func newKeyed(b *testing.B) (*keyedGuarded, []string) {
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	up := &upstream{}
	w := &keyedGuarded{next: up, family: breakerimpl.NewFamily(reg, up,
		breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "k"}}, liveKeys, 0)}
	keys := benchKeys()
	for _, k := range keys {
		w.Quote(context.Background(), k)
	}
	if n := w.family.Runtime().Len(); n != liveKeys {
		b.Fatalf("%d live keys, want %d", n, liveKeys)
	}
	return w, keys
}

// BenchmarkRouteSuccessKeys is the plain wrapper called with the keys the
// keyed benchmarks use, the baseline of BenchmarkKeyedSuccess.
func BenchmarkRouteSuccessKeys(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "s"}})
	keys := benchKeys()
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q.Quote(ctx, keys[i%liveKeys])
		i++
	}
}

// BenchmarkKeyedSuccess is a keyed method's success path with 10,000 live keys.
func BenchmarkKeyedSuccess(b *testing.B) {
	w, keys := newKeyed(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w.Quote(ctx, keys[i%liveKeys])
		i++
	}
}

// BenchmarkKeyedSuccessInt is the same keyed by an integer.
func BenchmarkKeyedSuccessInt(b *testing.B) {
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
	up := &upstream{}
	w := &keyedInt{next: up, family: breakerimpl.NewFamily(reg, up,
		breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "k"}}, liveKeys, 0)}
	ctx := context.Background()
	for i := range liveKeys {
		w.Quote(ctx, i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w.Quote(ctx, i%liveKeys)
		i++
	}
}

func BenchmarkRouteSuccessKeysParallel(b *testing.B) {
	q, _ := newGuarded(b, nil, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "p"}})
	keys := benchKeys()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		i := 0
		for pb.Next() {
			q.Quote(ctx, keys[i%liveKeys])
			i++
		}
	})
}

func BenchmarkKeyedSuccessParallel(b *testing.B) {
	w, keys := newKeyed(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		i := 0
		for pb.Next() {
			w.Quote(ctx, keys[i%liveKeys])
			i++
		}
	})
}
