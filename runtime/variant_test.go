package runtime_test

import (
	"context"
	"testing"

	"github.com/breakergen/breakergen/runtime"
)

type noDefer struct {
	next  quoter
	route *runtime.Route
}

func (w *noDefer) Quote(ctx context.Context, code string) (_ int, err error) {
	call, err := w.route.Enter(ctx)
	if err != nil {
		return
	}
	r, err := w.next.Quote(ctx, code)
	call.Exit(ctx, &err)
	return r, err
}

type enterOnly struct {
	next  quoter
	route *runtime.Route
}

func (w *enterOnly) Quote(ctx context.Context, code string) (_ int, err error) {
	_, err = w.route.Enter(ctx)
	if err != nil {
		return
	}
	return w.next.Quote(ctx, code)
}

type passthrough struct{ next quoter }

func (w *passthrough) Quote(ctx context.Context, code string) (int, error) {
	return w.next.Quote(ctx, code)
}

func BenchmarkVariant(b *testing.B) {
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()))
	rt := reg.Route(runtime.RouteConfig{Breaker: runtime.Config{Name: "v"}})
	up := &upstream{}
	for _, v := range []struct {
		name string
		q    quoter
	}{
		{"direct", up},
		{"passthrough", &passthrough{up}},
		{"enterOnly", &enterOnly{up, rt}},
		{"noDefer", &noDefer{up, rt}},
		{"generated", &guarded{up, rt}},
	} {
		b.Run(v.name, func(b *testing.B) { benchCalls(b, v.q) })
	}
}
