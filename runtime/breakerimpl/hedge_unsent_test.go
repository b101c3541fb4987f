package breakerimpl_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// errOneBody is why a try is unsent in these tests: the one body went to
// another try.
var errOneBody = errors.New("the one body was sent")

// oneBodyArgs is a race's arguments whose one body only the first try
// sends, as a hedged *http.Request without GetBody.
type oneBodyArgs struct {
	h    *hedgedChain
	sent *atomic.Bool
}

// oneBodyCall races h's sources, each try sending the one body if it is
// still there, else settled unsent; drops go to d.
func (h *hedgedChain) oneBodyCall(ctx context.Context, d *dropped) (int, error) {
	var run breakerimpl.Chain
	if run.Start(ctx, h.primary) {
		defer run.Done()
	}
	v, err := breakerimpl.RaceArgsDrop(&run, h.sources[0], h.fallbacks, h.routes, oneBodyArgs{h, new(atomic.Bool)},
		func(ctx context.Context, call breakerimpl.Call, impl *source, a oneBodyArgs) (int, error) {
			if !a.sent.CompareAndSwap(false, true) {
				return 0, call.Unsent(ctx, errOneBody)
			}
			return a.h.try(ctx, call, impl)
		}, d.drop)
	if run.Won() {
		return v, err
	}
	return 0, run.Err()
}

// TestRaceUnsentSourceIsPassedOver: a source whose try sent nothing is
// passed over as "unsent", counted by its breaker as nothing, and the
// race goes on: the primary, which sent the body, still wins.
func TestRaceUnsentSourceIsPassedOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: 2 * d, v: 1}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
		var drops dropped

		ctx, p := runtime.WithProvenance(context.Background())
		v, err := h.oneBodyCall(ctx, &drops)
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		require.Len(t, p.Skipped, 1)
		assert.Equal(t, runtime.Skip{Source: "fallback:sina", Why: "unsent", Err: errOneBody}, p.Skipped[0])
		assert.Empty(t, sina.askedAt(), "never called")
		st := stats(h, "fallback:sina")
		assert.Zero(t, st.Failures)
		assert.Zero(t, st.Successes)
		assert.Equal(t, runtime.Closed, st.State)
		assert.Equal(t, 1, p.Tries, "the unsent try is no try")
		assert.Empty(t, drops.sorted())
	})
}

// TestRaceUnsentRetryLeavesTheLastAnswer: a primary's retry that sends
// nothing is no try: the answer before it stands (dropped once, when the
// race moves on from it), and a fallback that cannot send is unsent.
func TestRaceUnsentRetryLeavesTheLastAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", v: 7, err: errUpstream}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Attempts: 3, Backoff: d / 10}, em, sina)
		var drops dropped

		ctx, p := runtime.WithProvenance(context.Background())
		_, err := h.oneBodyCall(ctx, &drops)
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		require.Len(t, ce.Sources, 2)
		assert.Equal(t, "error", ce.Sources[0].Why)
		assert.ErrorIs(t, ce.Sources[0].Err, errUpstream, "the one try's answer stands")
		assert.Equal(t, "unsent", ce.Sources[1].Why)
		assert.ErrorIs(t, err, errOneBody)
		assert.Len(t, em.askedAt(), 1)
		assert.Equal(t, 1, p.Tries)
		assert.Equal(t, []int{7}, drops.sorted(), "the failed answer, dropped once")
		assert.Equal(t, uint64(1), stats(h, "eastmoney").Failures)
		assert.Zero(t, stats(h, "fallback:sina").Failures)
	})
}

// TestUnsentHalfOpenFreesTheProbe: an unsent try admitted as a HALF_OPEN
// probe gives the probe's slot back: the next call is admitted.
func TestUnsentHalfOpenFreesTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
		rt := breakerimpl.NewRoute(reg, &source{}, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "b", FailureThreshold: 1, ResetTimeout: time.Second}})
		call, err := rt.Enter(context.Background())
		require.NoError(t, err)
		fail := errUpstream
		call.Exit(context.Background(), &fail)
		time.Sleep(2 * time.Second) // past the OPEN period and its jitter, on the bubble's clock
		call, err = rt.Enter(context.Background())
		require.NoError(t, err, "the probe")
		err = call.Unsent(context.Background(), errOneBody)
		assert.ErrorIs(t, err, errOneBody)
		call, err = rt.Enter(context.Background())
		require.NoError(t, err, "the probe's slot is free again")
		var ok error
		call.Exit(context.Background(), &ok)
		b, _ := reg.Lookup("b")
		assert.Equal(t, runtime.Closed, b.State())
	})
}
