package marketdata_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/examples/marketdata/mocks"
	"github.com/breakergen/breakergen/runtime"
)

var errBoom = errors.New("connection reset by peer")

// TestServiceDegradesWhenTDXOpens: tdx fails until its breaker opens; from
// then on the overview skips k-lines and financials without calling tdx,
// and still shows the quote and the fund flow.
func TestServiceDegradesWhenTDXOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // the eastmoney limiter waits: fake time
		ctrl := gomock.NewController(t)
		stocks := mocks.NewMockStockSource(ctrl)
		flows := mocks.NewMockFundFlowSource(ctrl)
		stocks.EXPECT().Quote(gomock.Any(), "600519").Return(marketdata.Quote{Code: "600519", Price: 1688}, nil).Times(5)
		flows.EXPECT().FundFlow(gomock.Any(), "600519").Return(marketdata.FundFlow{Code: "600519"}, nil).Times(5)
		// Every overview asks tdx twice. Failures 1-4 in the first two
		// overviews, the fifth (Kline of the third) trips the breaker, and
		// no tdx call is made after that.
		stocks.EXPECT().Kline(gomock.Any(), "600519", marketdata.PeriodDay, 20).Return(nil, errBoom).Times(3)
		stocks.EXPECT().Finance(gomock.Any(), "600519").Return(marketdata.Financials{}, errBoom).Times(2)

		reg := runtime.NewRegistry(runtime.WithLogger(discard()))
		svc := marketdata.NewService(marketdata.NewStockSourceBreaker(stocks, reg), marketdata.NewFundFlowSourceBreaker(flows, reg))

		for i := range 5 {
			ov, err := svc.Overview(t.Context(), "600519")
			require.NoError(t, err, "overview %d", i+1)
			assert.Equal(t, 1688.0, ov.Quote.Price)
			require.Len(t, ov.Gaps, 2, "overview %d", i+1)
			assert.Equal(t, []string{"kline", "finance"}, []string{ov.Gaps[0].Section, ov.Gaps[1].Section})
			skipped := i >= 2
			assert.Equal(t, skipped, ov.Gaps[1].Skipped, "finance skipped in overview %d", i+1)
			assert.Equal(t, i >= 3, ov.Gaps[0].Skipped, "kline skipped in overview %d", i+1)
		}
		assert.Equal(t, runtime.Open, state(t, reg, "tdx"))
		assert.Equal(t, runtime.Closed, state(t, reg, "tencent"))
		assert.Equal(t, runtime.Closed, state(t, reg, "eastmoney"))
	})
}

// TestServiceFailsOnlyWhenEverythingFails: an overview with no section is
// an error that says why for each.
func TestServiceFailsOnlyWhenEverythingFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // eastmoney's backoff waits: fake time
		ctrl := gomock.NewController(t)
		stocks := mocks.NewMockStockSource(ctrl)
		flows := mocks.NewMockFundFlowSource(ctrl)
		stocks.EXPECT().Quote(gomock.Any(), gomock.Any()).Return(marketdata.Quote{}, errBoom)
		stocks.EXPECT().Kline(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, errBoom)
		stocks.EXPECT().Finance(gomock.Any(), gomock.Any()).Return(marketdata.Financials{}, errBoom)
		// eastmoney makes two tries (attempts=2).
		flows.EXPECT().FundFlow(gomock.Any(), gomock.Any()).Return(marketdata.FundFlow{}, errBoom).Times(2)

		reg := runtime.NewRegistry(runtime.WithLogger(discard()))
		svc := marketdata.NewService(marketdata.NewStockSourceBreaker(stocks, reg), marketdata.NewFundFlowSourceBreaker(flows, reg))
		ov, err := svc.Overview(t.Context(), "600519")
		require.ErrorIs(t, err, errBoom)
		assert.Len(t, ov.Gaps, 4)
	})
}

// TestBreakerProbesAfterWindow follows the annotated tencent breaker
// through a whole cycle on the synctest clock: five failures open it, calls
// are refused without reaching the source, and 30s later (the annotation's
// reset) one probe goes through and closes it.
func TestBreakerProbesAfterWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctrl := gomock.NewController(t)
		stocks := mocks.NewMockStockSource(ctrl)
		reg := runtime.NewRegistry(runtime.WithLogger(discard()))
		src := marketdata.NewStockSourceBreaker(stocks, reg)
		ctx := t.Context()

		// tencent trips on its window: 20 calls (its minimum), all failed.
		first := stocks.EXPECT().Quote(gomock.Any(), "600519").Return(marketdata.Quote{}, errBoom).Times(20)
		for range 20 {
			_, err := src.Quote(ctx, "600519")
			require.ErrorIs(t, err, errBoom)
		}
		opened := time.Now()
		for range 3 {
			_, err := src.Quote(ctx, "600519")
			require.ErrorIs(t, err, runtime.ErrOpen)
			var oe *runtime.OpenError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "tencent", oe.Name)
			assert.Equal(t, opened.Add(30*time.Second), oe.Until)
		}

		time.Sleep(30 * time.Second)
		synctest.Wait()
		assert.Equal(t, runtime.HalfOpen, state(t, reg, "tencent"))

		stocks.EXPECT().Quote(gomock.Any(), "600519").Return(marketdata.Quote{Code: "600519"}, nil).After(first)
		q, err := src.Quote(ctx, "600519")
		require.NoError(t, err)
		assert.Equal(t, "600519", q.Code)
		assert.Equal(t, runtime.Closed, state(t, reg, "tencent"))

		var got []string
		for _, ev := range reg.Events(0) {
			got = append(got, ev.From.String()+"→"+ev.To.String())
		}
		assert.Equal(t, []string{"HALF_OPEN→CLOSED", "OPEN→HALF_OPEN", "CLOSED→OPEN"}, got)
	})
}

func state(t *testing.T, reg *runtime.Registry, name string) runtime.State {
	t.Helper()
	b, ok := reg.Lookup(name)
	require.True(t, ok, "breaker %s exists", name)
	return b.State()
}
