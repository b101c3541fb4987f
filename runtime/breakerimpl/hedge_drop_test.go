package breakerimpl_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// dropped records the answers a race's drop was given.
type dropped struct {
	mu sync.Mutex
	vs []int
}

func (d *dropped) drop(v int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.vs = append(d.vs, v)
}

func (d *dropped) sorted() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Sorted(slices.Values(d.vs))
}

// dropCall is h.argsCall through RaceArgsWith (RaceArgsValidWith with
// h.valid), dropping into d.
func (h *hedgedChain) dropCall(ctx context.Context, d *dropped) (int, error) {
	var run breakerimpl.Chain
	if run.Start(ctx, h.primary) {
		defer run.Done()
	}
	var v int
	var err error
	if h.valid == nil {
		v, err = breakerimpl.RaceArgsWith(&run, h.sources[0], h.fallbacks, h.routes, raceArgs{h, 0},
			func(ctx context.Context, call breakerimpl.Call, impl *source, a raceArgs) (int, error) {
				return a.h.try(ctx, call, impl)
			}, breakerimpl.RaceHooks[int, raceArgs]{Drop: d.drop})
	} else {
		v, err = breakerimpl.RaceArgsValidWith(&run, h.sources[0], h.fallbacks, h.routes, raceArgs{h, 0},
			func(ctx context.Context, call breakerimpl.Call, impl *source, a raceArgs) (int, bool, error) {
				return a.h.tryValid(ctx, call, impl)
			}, breakerimpl.RaceHooks[int, raceArgs]{Drop: d.drop})
	}
	if run.Won() {
		return v, err
	}
	return 0, run.Err()
}

// TestRaceDropReleasesEveryAnswerNotReturned: every answer a race does
// not return reaches drop once (a try its retry replaced, a failed
// source, an invalid one, a loser cut short), and the winner never does.
func TestRaceDropReleasesEveryAnswerNotReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: d / 10, v: 7, err: errUpstream} // two tries, both fail
		sina := &source{name: "sina", delay: d / 10, v: -1}                     // invalid
		tdx := &source{name: "tdx", delay: time.Hour, v: 3}                     // loses, cut short
		qq := &source{name: "qq", delay: d / 10, v: 4}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Attempts: 2, Backoff: d / 10}, em, sina, tdx, qq)
		h.valid = func(v int) bool { return v > 0 }
		var drops dropped

		ctx, p := runtime.WithProvenance(context.Background())
		v, err := h.dropCall(ctx, &drops)
		require.NoError(t, err)
		assert.Equal(t, 4, v)
		assert.Equal(t, "fallback:qq hedged (eastmoney error, fallback:sina invalid, fallback:tdx slow)", p.String())
		assert.Equal(t, []int{-1, 0, 7, 7}, drops.sorted(),
			"em's first try (replaced) and its last (failed), sina's invalid answer, tdx's cut short; never qq's")
	})
}

// TestRaceDropReplacedWhenTheRetryPanics: a primary's try that a retry
// replaces is dropped even when the retry panics; the panic goes on to
// the caller.
func TestRaceDropReplacedWhenTheRetryPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: d / 10, v: 7, err: errUpstream, panicAt: 2}
		sina := &source{name: "sina", delay: time.Hour, v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d, Attempts: 2, Backoff: d / 10}, em, sina)
		var drops dropped
		assert.PanicsWithValue(t, "upstream client bug", func() { _, _ = h.dropCall(context.Background(), &drops) })
		synctest.Wait()
		assert.Contains(t, drops.sorted(), 7, "the first try's answer, which the panicking retry replaced")
	})
}

// TestRaceDropPrimaryBeforeTheDelay: a primary that answers before the
// delay is returned, not dropped; one that fails then is dropped before
// the fallback is asked.
func TestRaceDropPrimaryBeforeTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: d / 10, v: 1}
		sina := &source{name: "sina", v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
		var drops dropped
		v, err := h.dropCall(context.Background(), &drops)
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		assert.Empty(t, drops.sorted())

		em.mu.Lock()
		em.v, em.err = 5, errUpstream
		em.mu.Unlock()
		v, err = h.dropCall(context.Background(), &drops)
		require.NoError(t, err)
		assert.Equal(t, 2, v)
		assert.Equal(t, []int{5}, drops.sorted(), "the primary's failed answer, passed over")
	})
}

// TestRaceDropLoserAndNoAnswer: the answer of a source still in flight
// when another won is dropped, whatever it is; and when no source
// answers, every answer is dropped, once.
func TestRaceDropLoserAndNoAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := &source{name: "eastmoney", delay: 3 * d / 2, v: 1}
		sina := &source{name: "sina", delay: d / 4, v: 2}
		h := newHedgedChain(t, breakerimpl.RouteConfig{Hedge: d}, em, sina)
		var drops dropped
		v, err := h.dropCall(context.Background(), &drops)
		require.NoError(t, err)
		assert.Equal(t, 2, v)
		assert.Equal(t, []int{0}, drops.sorted(), "em, cut short by its cancelled ctx")

		em.mu.Lock()
		em.err = errUpstream
		em.mu.Unlock()
		sina.mu.Lock()
		sina.err = errUpstream
		sina.mu.Unlock()
		drops = dropped{}
		_, err = h.dropCall(context.Background(), &drops)
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, []int{1, 2}, drops.sorted(), "no source answered: each failed answer dropped")
	})
}
