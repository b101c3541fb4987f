package marketdata_test

import (
	"math/rand/v2"
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

// TestChainFallsBackOnInjectedFaults: faults injected on the primary's
// breaker never reach it; the chain answers from its fallback, and the
// provenance says the primary was passed over for an injected fault.
func TestChainFallsBackOnInjectedFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctrl := gomock.NewController(t)
		reg := runtime.NewRegistry(runtime.WithLogger(discard()), runtime.WithoutEnv(),
			runtime.WithRand(rand.New(rand.NewPCG(1, 2))),
			runtime.WithConfig(runtime.Config{Name: "eastmoney", Fault: 1}))
		primary := mocks.NewMockFundFlowSource(ctrl) // no call expected: every try is injected
		sina := mocks.NewMockFundFlowSource(ctrl)
		sina.EXPECT().FundFlow(gomock.Any(), "600519").Return(marketdata.FundFlow{Code: "600519", MainNet: 1, Time: time.Unix(1, 0)}, nil)
		chain := marketdata.NewFundFlowSourceChain(primary, reg, runtime.Fallback[marketdata.FundFlowSource]{Name: "sina", Impl: sina})
		ctx, p := runtime.WithProvenance(t.Context())
		f, err := chain.FundFlow(ctx, "600519")
		require.NoError(t, err)
		assert.Equal(t, "600519", f.Code)
		assert.Equal(t, "fallback:sina", p.Source)
		require.NotEmpty(t, p.Skipped)
		assert.Equal(t, "eastmoney", p.Skipped[0].Source)
		assert.Equal(t, "injected", p.Skipped[0].Why, p.String())
		assert.ErrorIs(t, p.Skipped[0].Err, runtime.ErrInjected)
		b, ok := reg.Lookup("eastmoney")
		require.True(t, ok)
		st := b.Stats()
		assert.Equal(t, uint64(2), st.Injected, "both attempts were injected, retried as real failures")
		assert.Equal(t, st.Injected, st.Failures)
	})
}
