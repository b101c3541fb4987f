package e2e

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/breakergen/breakergen/runtime"
)

// chainSetup builds a chain of a primary and the fallback "sina", both
// mocks, on a fresh registry.
func chainSetup(t *testing.T) (primary, sina *MockFlows, c *FlowsChain, reg *runtime.Registry) {
	ctrl := gomock.NewController(t)
	primary, sina = NewMockFlows(ctrl), NewMockFlows(ctrl)
	reg = newRegistry()
	c = NewFlowsChain(primary, reg, runtime.Fallback[Flows]{Name: "sina", Impl: sina})
	return primary, sina, c, reg
}

func flow(t *testing.T, c *FlowsChain, code string) (Flow, *runtime.Provenance, error) {
	ctx, p := runtime.WithProvenance(context.Background())
	f, err := c.Flow(ctx, code)
	return f, p, err
}

func TestChainPrimaryAnswers(t *testing.T) {
	primary, _, c, _ := chainSetup(t)
	primary.EXPECT().Flow(gomock.Any(), "600519").Return(Flow{Net: 1.5}, nil)
	f, p, err := flow(t, c, "600519")
	require.NoError(t, err)
	assert.Equal(t, 1.5, f.Net)
	assert.Equal(t, "flows", p.Source)
	assert.Equal(t, "live", p.String())
	assert.Equal(t, 1, p.Tries)
}

func TestChainPrimaryErrorThenFallback(t *testing.T) {
	primary, sina, c, reg := chainSetup(t)
	primary.EXPECT().Flow(gomock.Any(), "600519").Return(Flow{}, errDown)
	sina.EXPECT().Flow(gomock.Any(), "600519").Return(Flow{Net: 2}, nil)
	f, p, err := flow(t, c, "600519")
	require.NoError(t, err)
	assert.Equal(t, 2.0, f.Net)
	assert.Equal(t, "fallback:sina", p.Source)
	assert.Equal(t, "fallback:sina (flows error)", p.String())
	assert.Equal(t, 2, p.Tries)
	_, ok := reg.Lookup("fallback:sina")
	assert.True(t, ok, "the fallback has its own breaker")
}

func TestChainPrimaryOpenThenFallback(t *testing.T) {
	primary, sina, c, reg := chainSetup(t)
	primary.EXPECT().Flow(gomock.Any(), "x").Return(Flow{}, errDown).Times(2)
	sina.EXPECT().Flow(gomock.Any(), "x").Return(Flow{Net: 3}, nil).Times(3)
	for range 2 {
		_, _, err := flow(t, c, "x")
		require.NoError(t, err)
	}
	require.Equal(t, runtime.Open, state(t, reg, "flows"))
	// The primary is not called: its breaker rejects it.
	f, p, err := flow(t, c, "x")
	require.NoError(t, err)
	assert.Equal(t, 3.0, f.Net)
	assert.Equal(t, "fallback:sina (flows open)", p.String())
	assert.Equal(t, 1, p.Tries, "a rejection costs no try")
}

func TestChainAllFailedThenStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary, sina, c, _ := chainSetup(t)
		primary.EXPECT().Flow(gomock.Any(), "x").Return(Flow{Net: 4}, nil)
		_, _, err := flow(t, c, "x")
		require.NoError(t, err)

		time.Sleep(12 * time.Second)
		primary.EXPECT().Flow(gomock.Any(), "x").Return(Flow{}, errDown)
		sina.EXPECT().Flow(gomock.Any(), "x").Return(Flow{}, errDown)
		f, p, err := flow(t, c, "x")
		require.NoError(t, err)
		assert.Equal(t, 4.0, f.Net, "the last valid answer")
		assert.True(t, p.Stale)
		assert.Equal(t, 12*time.Second, p.Age)
		assert.Equal(t, "stale", p.Source)
		assert.Equal(t, "stale 12s (flows error, fallback:sina error)", p.String())
	})
}

func TestChainStaleTooOld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary, sina, c, _ := chainSetup(t)
		primary.EXPECT().Flow(gomock.Any(), "x").Return(Flow{Net: 4}, nil)
		_, _, err := flow(t, c, "x")
		require.NoError(t, err)

		time.Sleep(time.Hour)
		primary.EXPECT().Flow(gomock.Any(), "x").Return(Flow{}, errDown)
		sina.EXPECT().Flow(gomock.Any(), "x").Return(Flow{}, errDown)
		_, p, err := flow(t, c, "x")
		require.ErrorIs(t, err, errDown)
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		assert.Len(t, ce.Sources, 2)
		assert.False(t, p.Stale)
		assert.Equal(t, 2, p.Tries)
	})
}

func TestChainInvalidSkippedAndNotCached(t *testing.T) {
	primary, sina, c, reg := chainSetup(t)
	// An empty answer moves on to the fallback and is not a failure.
	primary.EXPECT().Flow(gomock.Any(), "x").Return(Flow{}, nil)
	sina.EXPECT().Flow(gomock.Any(), "x").Return(Flow{Net: 5}, nil)
	f, p, err := flow(t, c, "x")
	require.NoError(t, err)
	assert.Equal(t, 5.0, f.Net)
	assert.Equal(t, "fallback:sina (flows invalid)", p.String())
	b, _ := reg.Lookup("flows")
	assert.Zero(t, b.Stats().Failures, "no data is neither success nor failure")

	// Every source empty and nothing kept for "y": ErrInvalid, and the
	// empty answers were not cached.
	primary.EXPECT().Flow(gomock.Any(), "y").Return(Flow{}, nil).Times(2)
	sina.EXPECT().Flow(gomock.Any(), "y").Return(Flow{}, nil).Times(2)
	_, _, err = flow(t, c, "y")
	assert.ErrorIs(t, err, runtime.ErrInvalid)
	_, p, err = flow(t, c, "y")
	assert.ErrorIs(t, err, runtime.ErrInvalid)
	assert.False(t, p.Stale)
}

func TestChainBudgetStopsTheChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary, _, c, _ := chainSetup(t)
		// budget=2: both tries go to the primary, none is left for sina.
		primary.EXPECT().Budgeted(gomock.Any(), "x").Return(Flow{}, errDown).Times(2)
		ctx, p := runtime.WithProvenance(context.Background())
		_, err := c.Budgeted(ctx, "x")
		require.ErrorIs(t, err, errDown)
		assert.Equal(t, 2, p.Tries)
		require.Len(t, p.Skipped, 2)
		assert.Equal(t, "fallback:sina", p.Skipped[1].Source)
		assert.Equal(t, "budget", p.Skipped[1].Why)

		// A request-wide budget of one: the primary's try spends it. (A
		// fresh chain: the two failures above opened "flows".)
		primary, _, c, _ = chainSetup(t)
		primary.EXPECT().Flow(gomock.Any(), "y").Return(Flow{}, errDown)
		ctx, p = runtime.WithProvenance(runtime.WithBudget(context.Background(), 1))
		_, err = c.Flow(ctx, "y")
		require.ErrorIs(t, err, errDown)
		assert.Equal(t, 1, p.Tries)
		assert.Equal(t, "budget", p.Skipped[len(p.Skipped)-1].Why)
	})
}

func TestChainWithoutFallbacks(t *testing.T) {
	ctrl := gomock.NewController(t)
	primary := NewMockFlows(ctrl)
	c := NewFlowsChain(primary, newRegistry())
	primary.EXPECT().Budgeted(gomock.Any(), "x").Return(Flow{}, errDown).AnyTimes()
	synctest.Test(t, func(t *testing.T) {
		_, err := c.Budgeted(context.Background(), "x")
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce, "a chain with no fallbacks returns a ChainError too")
		assert.True(t, errors.Is(err, errDown))
	})
}

func TestWrapperValidAndStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctrl := gomock.NewController(t)
		m := NewMockFlows(ctrl)
		reg := newRegistry()
		w := NewFlowsBreaker(m, reg)
		ctx := context.Background()

		// An invalid answer with nothing kept is returned as it is.
		m.EXPECT().Flow(ctx, "x").Return(Flow{}, nil)
		f, err := w.Flow(ctx, "x")
		require.NoError(t, err)
		assert.Zero(t, f.Net)

		m.EXPECT().Flow(ctx, "x").Return(Flow{Net: 6}, nil)
		_, err = w.Flow(ctx, "x")
		require.NoError(t, err)
		// Invalid, failed, then rejected: the kept answer each time.
		m.EXPECT().Flow(ctx, "x").Return(Flow{}, nil)
		m.EXPECT().Flow(ctx, "x").Return(Flow{}, errDown).Times(2)
		for range 4 {
			f, err = w.Flow(ctx, "x")
			require.NoError(t, err)
			assert.Equal(t, 6.0, f.Net)
		}
		assert.Equal(t, runtime.Open, state(t, reg, "flows"))
		b, _ := reg.Lookup("flows")
		assert.Equal(t, uint64(2), b.Stats().Failures, "the invalid answer counted as neither")
	})
}
