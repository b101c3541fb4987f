package e2e

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/breakergen/breakergen/runtime"
)

// hang answers only when its ctx ends, with ctx.Err().
func hang(ctx context.Context, _ string) (float64, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

func pricesSetup(t *testing.T) (em, sina, qq *MockPrices, c *PricesChain, reg *runtime.Registry) {
	ctrl := gomock.NewController(t)
	em, sina, qq = NewMockPrices(ctrl), NewMockPrices(ctrl), NewMockPrices(ctrl)
	reg = runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithCallCounts())
	c = NewPricesChain(em, reg,
		runtime.Fallback[Prices]{Name: "sina", Impl: sina},
		runtime.Fallback[Prices]{Name: "qq", Impl: qq})
	return em, sina, qq, c, reg
}

func TestHedgedChainBackupAnswersAtTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em, sina, _, c, reg := pricesSetup(t)
		em.EXPECT().Price(gomock.Any(), "600519").DoAndReturn(hang)
		sina.EXPECT().Price(gomock.Any(), "600519").Return(1700.5, nil)

		ctx, p := runtime.WithProvenance(context.Background())
		start := time.Now()
		v, err := c.Price(ctx, "600519")
		require.NoError(t, err)
		assert.Equal(t, 1700.5, v)
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "the backup was asked at the hedge delay")
		assert.Equal(t, "fallback:sina hedged (em slow)", p.String())
		assert.True(t, p.Hedged)

		synctest.Wait() // the loser's goroutine has ended
		b, _ := reg.Lookup("em")
		assert.Equal(t, runtime.Closed, b.State(), "threshold=1, and the loser's cancellation is no failure")
		assert.Equal(t, []runtime.ChainAnswer{{Source: "fallback:sina", Kind: "hedged", Count: 1}}, reg.ChainAnswers())
	})
}

func TestHedgedChainSecondHedgeAtTwiceTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em, sina, qq, c, _ := pricesSetup(t)
		em.EXPECT().Depth(gomock.Any(), "x").DoAndReturn(func(ctx context.Context, _ string) ([]float64, int, error) {
			<-ctx.Done()
			return nil, 0, ctx.Err()
		})
		sina.EXPECT().Depth(gomock.Any(), "x").DoAndReturn(func(ctx context.Context, _ string) ([]float64, int, error) {
			<-ctx.Done()
			return nil, 0, ctx.Err()
		})
		qq.EXPECT().Depth(gomock.Any(), "x").Return([]float64{1, 2}, 2, nil)

		start := time.Now()
		bids, n, err := c.Depth(context.Background(), "x")
		require.NoError(t, err)
		assert.Equal(t, []float64{1, 2}, bids, "every result of the winner")
		assert.Equal(t, 2, n)
		assert.Equal(t, 200*time.Millisecond, time.Since(start))
	})
}

func TestHedgedChainPrimaryBeforeTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em, _, _, c, reg := pricesSetup(t)
		em.EXPECT().Price(gomock.Any(), "x").DoAndReturn(func(ctx context.Context, _ string) (float64, error) {
			time.Sleep(50 * time.Millisecond)
			return 1, nil
		})
		v, err := c.Price(context.Background(), "x")
		require.NoError(t, err)
		assert.Equal(t, 1.0, v, "the fallbacks' mocks expect no call")
		assert.Equal(t, []runtime.ChainAnswer{{Source: "em", Kind: "live", Count: 1}}, reg.ChainAnswers())
	})
}

func TestHedgedChainEverySourceFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em, sina, qq, c, _ := pricesSetup(t)
		em.EXPECT().Price(gomock.Any(), "x").Return(0.0, errDown)
		sina.EXPECT().Price(gomock.Any(), "x").Return(0.0, errDown)
		qq.EXPECT().Price(gomock.Any(), "x").Return(0.0, errDown)
		_, err := c.Price(context.Background(), "x")
		var ce *runtime.ChainError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "breaker: every source failed: em: error: "+runtime.Brief(errDown)+
			"; fallback:sina: error: "+runtime.Brief(errDown)+"; fallback:qq: error: "+runtime.Brief(errDown), err.Error())
	})
}

// TestHedgedWinnerCtxEndsWithTheCall: the ctx of the source whose plain
// answer won ends as the call returns, whichever source won. Left live, it
// stayed registered with the caller's ctx until that ended: under a
// worker's long-lived ctx, a little more memory with every call.
func TestHedgedWinnerCtxEndsWithTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em, sina, _, c, _ := pricesSetup(t)
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()

		var won context.Context
		em.EXPECT().Price(gomock.Any(), "600519").DoAndReturn(func(ctx context.Context, _ string) (float64, error) {
			won = ctx
			_ = ctx.Done() // as net/http does: the ctx is watched
			return 1700.5, nil
		})
		_, err := c.Price(parent, "600519")
		require.NoError(t, err)
		assert.Error(t, won.Err(), "the primary won before the hedge delay: its ctx ended with the call")

		em.EXPECT().Price(gomock.Any(), "600519").DoAndReturn(hang)
		sina.EXPECT().Price(gomock.Any(), "600519").DoAndReturn(func(ctx context.Context, _ string) (float64, error) {
			won = ctx
			return 1700.5, nil
		})
		_, err = c.Price(parent, "600519")
		require.NoError(t, err)
		assert.Error(t, won.Err(), "the hedge won: its ctx ended with the call")
		require.NoError(t, parent.Err())
	})
}
