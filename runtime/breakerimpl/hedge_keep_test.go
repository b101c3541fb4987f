package breakerimpl

import (
	"context"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/breakergen/breakergen/runtime"
)

// big is a call's argument, or answer, large enough that keeping it after
// the call matters.
type big = *[1 << 20]byte

// TestHedgeKeepsNothingOfACallOnALiveParent: a primary that asks for its
// ctx's Done (as any upstream that can be cancelled does) makes its ctx
// watch the chain's ctx, which lives on after the call. A race whose
// primary lost has no use for the watch: the race is not kept. One whose
// primary won keeps it (the primary's ctx must still end with the chain's
// ctx, for an upstream that kept it), and so the race, but neither the
// call's arguments nor its answer.
func TestHedgeKeepsNothingOfACallOnALiveParent(t *testing.T) {
	for _, primaryWins := range []bool{true, false} {
		t.Run(fmt.Sprint("primary wins ", primaryWins), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
				rt := NewRoute(reg, 0, RouteConfig{Breaker: runtime.Config{Name: "primary"}, Hedge: time.Second})
				fb := NewRoute(reg, 1, RouteConfig{Breaker: runtime.Config{Name: "backup"}})
				var args, answer weak.Pointer[[1 << 20]byte]
				var pctx weak.Pointer[raceCtx]
				func() {
					var run Chain
					if run.Start(parent, rt) {
						defer run.Done()
					}
					a := new([1 << 20]byte)
					args = weak.Make(a)
					v, err := RaceArgs(&run, 0, []runtime.Fallback[int]{{Name: "backup", Impl: 1}}, []*Route{fb}, a,
						func(ctx context.Context, call Call, impl int, a big) (_ big, err error) {
							defer call.Exit(ctx, &err)
							err = PanicGuard
							if impl == 0 {
								pctx = weak.Make(ctx.(*raceCtx))
								if !primaryWins {
									<-ctx.Done()
									return nil, ctx.Err()
								}
								_ = ctx.Done()
							}
							v := new([1 << 20]byte)
							answer = weak.Make(v)
							return v, nil
						})
					if !run.Won() || err != nil || v == nil {
						t.Errorf("primary wins %v: got %v, %v, won %v", primaryWins, v != nil, err, run.Won())
					}
				}()
				synctest.Wait()
				goruntime.GC()
				if args.Value() != nil {
					t.Errorf("primary wins %v: the call's arguments are kept", primaryWins)
				}
				if answer.Value() != nil {
					t.Errorf("primary wins %v: the call's answer is kept", primaryWins)
				}
				if !primaryWins && pctx.Value() != nil {
					t.Error("the race of a primary that lost is kept, by its ctx's watch of the chain's")
				}
				goruntime.KeepAlive(parent)
			})
		})
	}
}

type keyOfCall struct{}

// TestHedgePrimaryKeepsItsOwnCtx: the context package lets a callee keep
// its ctx past its return (a goroutine it started, a body read later). A
// primary that answers first and keeps its ctx, without asking for its
// Done during the call, still sees its own call's values, no error and no
// cancellation after later calls on the same route have come and gone,
// one of them lost by its primary (its ctx cancelled).
func TestHedgePrimaryKeepsItsOwnCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
		rt := NewRoute(reg, 0, RouteConfig{Breaker: runtime.Config{Name: "primary"}, Hedge: time.Second})
		fb := NewRoute(reg, 1, RouteConfig{Breaker: runtime.Config{Name: "backup"}})
		call := func(n int, lose bool) context.Context {
			var kept context.Context
			var run Chain
			ctx := context.WithValue(context.Background(), keyOfCall{}, n)
			if run.Start(ctx, rt) {
				defer run.Done()
			}
			_, err := RaceArgs(&run, 0, []runtime.Fallback[int]{{Name: "backup", Impl: 1}}, []*Route{fb}, n,
				func(ctx context.Context, call Call, impl int, n int) (_ int, err error) {
					defer call.Exit(ctx, &err)
					err = PanicGuard
					if impl == 0 {
						kept = ctx
						if lose {
							<-ctx.Done()
							return 0, ctx.Err()
						}
					}
					return n, nil
				})
			if err != nil {
				t.Fatalf("call %d: %v", n, err)
			}
			return kept
		}
		first := call(1, false)
		for n := 2; n <= 4; n++ {
			call(n, n == 3)
		}
		synctest.Wait()
		if v := first.Value(keyOfCall{}); v != 1 {
			t.Errorf("the first call's kept ctx holds value %v, want 1", v)
		}
		if err := first.Err(); err != nil {
			t.Errorf("the first call's kept ctx ended: %v", err)
		}
		select {
		case <-first.Done():
			t.Error("the first call's kept ctx is done")
		default:
		}
	})
}

// TestRaceCtxAfterFunc: a ctx derived from a race's primary ctx (as
// net/http derives one for each request) ends with it, through its
// AfterFunc rather than a goroutine watching Done; stop withdraws the
// func before that, and a func registered after the end runs at once.
func TestRaceCtxAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancelParent := context.WithCancel(context.Background())
		defer cancelParent()
		for _, end := range []string{"lost", "parent"} {
			parent, cancelParent := context.WithCancel(parent)
			c := &raceCtx{parent: parent}
			child, cancelChild := context.WithCancel(c)
			defer cancelChild()
			var ran, stopped int
			stop := c.AfterFunc(func() { stopped++ })
			c.AfterFunc(func() { ran++ })
			if !stop() {
				t.Fatal("stop before the end reported false")
			}
			if end == "lost" {
				c.cancel(errLost)
			} else {
				cancelParent()
			}
			synctest.Wait()
			if child.Err() == nil {
				t.Errorf("%s: the derived ctx did not end", end)
			}
			if ran != 1 || stopped != 0 {
				t.Errorf("%s: ran %d, stopped func ran %d, want 1, 0", end, ran, stopped)
			}
			if stop() {
				t.Errorf("%s: stop after the end reported true", end)
			}
			late := 0
			if c.AfterFunc(func() { late++ })() {
				t.Errorf("%s: the stop of a func registered after the end reported true", end)
			}
			synctest.Wait()
			if late != 1 {
				t.Errorf("%s: a func registered after the end ran %d times, want 1", end, late)
			}
			cancelParent()
		}
	})
}

// TestHedgeAnsweredEndsTheWinnersCtx: with the hook Answered (an answer
// read in full), the winner's ctx ends as the race returns, whichever
// source won, so that nothing of the call stays registered with the
// chain's live ctx; a primary that never asked for Done has nothing to end,
// and its ctx is left as it was (no state made for it).
func TestHedgeAnsweredEndsTheWinnersCtx(t *testing.T) {
	for _, tc := range []struct {
		name        string
		primaryWins bool
		watch       bool // the primary asks for its ctx's Done
	}{{"primary watching", true, true}, {"primary not watching", true, false}, {"backup", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
				rt := NewRoute(reg, 0, RouteConfig{Breaker: runtime.Config{Name: "primary"}, Hedge: time.Second})
				fb := NewRoute(reg, 1, RouteConfig{Breaker: runtime.Config{Name: "backup"}})
				var won context.Context
				var run Chain
				if run.Start(parent, rt) {
					defer run.Done()
				}
				v, err := RaceArgsWith(&run, 0, []runtime.Fallback[int]{{Name: "backup", Impl: 1}}, []*Route{fb}, struct{}{},
					func(ctx context.Context, call Call, impl int, _ struct{}) (_ int, err error) {
						defer call.Exit(ctx, &err)
						err = PanicGuard
						if impl == 0 && !tc.primaryWins {
							<-ctx.Done()
							return 0, ctx.Err()
						}
						if tc.watch {
							_ = ctx.Done()
						}
						won = ctx
						return impl + 40, nil
					}, RaceHooks[int, struct{}]{Answered: true})
				if err != nil || !run.Won() {
					t.Fatalf("got %v, %v, won %v", v, err, run.Won())
				}
				if tc.watch {
					if won.Err() == nil {
						t.Error("the winner's ctx is live after the race returned")
					}
				} else if won.(*raceCtx).st.Load() != nil {
					t.Error("a state was made for a primary ctx nobody watched")
				}
				if parent.Err() != nil {
					t.Error("the chain's ctx ended")
				}
				synctest.Wait()
			})
		})
	}
}
