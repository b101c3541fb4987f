package breakerimpl_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// TestRaceArgsTwoMethodsOnOneRouteConcurrently: two methods of one chain
// line, with races of two types on one route, called from several
// goroutines at once on the real clock, with a primary whose answer comes
// on either side of the hedge delay (so that races are taken over by the
// timer, or recycled with its tick taken, or with their ctx watching the
// chain's): every call gets its own answer, made with its own arguments,
// and every call is counted once. Under the race detector it also caught
// arm setting the race's timer after starting it: a timer that fired at
// once let its goroutine take the race over and see no timer, and the
// caller's late write then left it waiting for a tick that never came.
func TestRaceArgsTwoMethodsOnOneRouteConcurrently(t *testing.T) {
	const hedge = 200 * time.Microsecond
	em := &source{name: "eastmoney", v: 1}
	sina := &source{name: "sina", v: 2}
	h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: hedge}, em, sina)
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	// ask answers impl.v, after a delay on either side of the hedge
	// delay for the primary, with or without asking for its ctx's Done.
	answer := func(ctx context.Context, call breakerimpl.Call, impl *source, late, watch bool) (_ int, err error) {
		defer call.Exit(ctx, &err)
		err = breakerimpl.PanicGuard
		if impl == em && late {
			t := time.NewTimer(2 * hedge)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		} else if watch {
			_ = ctx.Done()
		}
		return impl.v, nil
	}
	type getArgs struct {
		add         int
		late, watch bool
	}
	get := func(ctx context.Context, a getArgs) (int, error) {
		var run breakerimpl.Chain
		if run.Start(ctx, h.primary) {
			defer run.Done()
		}
		v, err := breakerimpl.RaceArgs(&run, em, h.fallbacks, h.routes, a,
			func(ctx context.Context, call breakerimpl.Call, impl *source, a getArgs) (int, error) {
				v, err := answer(ctx, call, impl, a.late, a.watch)
				return v*1_000_000 + a.add, err
			})
		if run.Won() {
			return v, err
		}
		return 0, run.Err()
	}
	type nameArgs struct {
		name        string
		late, watch bool
	}
	name := func(ctx context.Context, a nameArgs) (string, error) {
		var run breakerimpl.Chain
		if run.Start(ctx, h.primary) {
			defer run.Done()
		}
		v, err := breakerimpl.RaceArgsValid(&run, em, h.fallbacks, h.routes, a,
			func(ctx context.Context, call breakerimpl.Call, impl *source, a nameArgs) (string, bool, error) {
				v, err := answer(ctx, call, impl, a.late, a.watch)
				return fmt.Sprint(v, a.name), true, err
			})
		if run.Won() {
			return v, err
		}
		return "", run.Err()
	}
	const goroutines, calls = 4, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				ctx := context.Background()
				if rand.IntN(2) == 0 {
					ctx = parent
				}
				late, watch := rand.IntN(4) == 0, rand.IntN(2) == 0
				add := g*calls + i
				if i%2 == 0 {
					v, err := get(ctx, getArgs{add, late, watch})
					if err != nil || v%1_000_000 != add || v/1_000_000 != 1 && v/1_000_000 != 2 {
						t.Errorf("get(%d): %d, %v", add, v, err)
						return
					}
				} else {
					want := fmt.Sprint("call", add)
					v, err := name(ctx, nameArgs{want, late, watch})
					if err != nil || v != "1"+want && v != "2"+want {
						t.Errorf("name(%q): %q, %v", want, v, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	var n uint64
	for _, a := range h.reg.ChainAnswers() {
		n += a.Count
	}
	assert.Equal(t, uint64(goroutines*calls), n, "every call counted once: %v", h.reg.ChainAnswers())
}
