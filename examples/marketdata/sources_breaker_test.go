package marketdata_test

import (
	"context"
	"math"
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
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// These tests pin down what the annotations in sources.go promise, so they
// hold for the hand-written stand-in and for breakergen's output alike.

// stockMethod is one method of StockSource: how to expect it on the mock
// (returning err) and how to call it.
type stockMethod struct {
	name    string
	breaker string // "" when the method is delegated unguarded
	expect  func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call
	call    func(ctx context.Context, s marketdata.StockSource) error
}

var stockMethods = []stockMethod{
	{"Quote", "tencent",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.Quote(gomock.Any(), "600519").Return(marketdata.Quote{}, err)
		},
		func(ctx context.Context, s marketdata.StockSource) error { return errOf(s.Quote(ctx, "600519")) }},
	{"StockInfo", "tencent",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.StockInfo(gomock.Any(), "600519").Return(marketdata.StockInfo{}, err)
		},
		func(ctx context.Context, s marketdata.StockSource) error { return errOf(s.StockInfo(ctx, "600519")) }},
	{"QuoteList", "eastmoney",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.QuoteList(gomock.Any(), []string{"600519", "000001"}).Return(nil, err)
		},
		func(ctx context.Context, s marketdata.StockSource) error {
			return errOf(s.QuoteList(ctx, []string{"600519", "000001"}))
		}},
	{"Search", "eastmoney",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.Search(gomock.Any(), "gzmt").Return(nil, err)
		},
		func(ctx context.Context, s marketdata.StockSource) error { return errOf(s.Search(ctx, "gzmt")) }},
	{"Industry", "eastmoney",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.Industry(gomock.Any(), "600519").Return(marketdata.Industry{}, err)
		},
		func(ctx context.Context, s marketdata.StockSource) error { return errOf(s.Industry(ctx, "600519")) }},
	{"Kline", "tdx",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.Kline(gomock.Any(), "600519", marketdata.PeriodWeek, 10).Return(nil, err)
		},
		func(ctx context.Context, s marketdata.StockSource) error {
			return errOf(s.Kline(ctx, "600519", marketdata.PeriodWeek, 10))
		}},
	{"Finance", "tdx",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.Finance(gomock.Any(), "600519").Return(marketdata.Financials{}, err)
		},
		func(ctx context.Context, s marketdata.StockSource) error { return errOf(s.Finance(ctx, "600519")) }},
	{"Changes", "push2ex",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.Changes(gomock.Any()).Return(nil, err)
		},
		func(ctx context.Context, s marketdata.StockSource) error { return errOf(s.Changes(ctx)) }},
	{"Ping", "",
		func(m *mocks.MockStockSourceMockRecorder, err error) *gomock.Call {
			return m.Ping(gomock.Any()).Return(err)
		},
		func(ctx context.Context, s marketdata.StockSource) error { return s.Ping(ctx) }},
}

// neverRefuse is a source of randomness whose draws are all just under 1,
// so that an adaptive throttle never refuses a call.
type neverRefuse struct{}

func (neverRefuse) Uint64() uint64 { return math.MaxUint64 }

// errOf drops a method's value result.
func errOf[T any](_ T, err error) error { return err }

var breakerNames = []string{"eastmoney", "push2ex", "tdx", "tencent"}

// TestStockSourceRoutes: each method's failures trip exactly the breaker
// its annotation names, after exactly that breaker's threshold (tencent's
// window trips once it holds its minimum of 20 calls, all failed), and the
// wrapped method is not called once it is open. Ping (//breaker:skip) never
// trips anything.
func TestStockSourceRoutes(t *testing.T) {
	thresholds := map[string]int{"eastmoney": 5, "tencent": 20, "tdx": 5, "push2ex": 2}
	attempts := map[string]int{"eastmoney": 2} // tries per call; 1 elsewhere
	for _, m := range stockMethods {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { // eastmoney's limiter waits on fake time
				ctrl := gomock.NewController(t)
				mock := mocks.NewMockStockSource(ctrl)
				// push2ex's throttle never draws a refusal here: the
				// threshold alone trips it.
				reg := runtime.NewRegistry(runtime.WithLogger(discard()), runtime.WithRand(rand.New(neverRefuse{})))
				src := marketdata.NewStockSourceBreaker(mock, reg)
				ctx := t.Context()

				// Every try is a failure of the breaker; the try that
				// trips it is the last one made.
				tries, calls := 10, 10
				if m.breaker != "" {
					tries = thresholds[m.breaker]
					per := max(attempts[m.breaker], 1)
					calls = (tries + per - 1) / per
				}
				m.expect(mock.EXPECT(), errBoom).Times(tries)
				for range calls {
					require.ErrorIs(t, m.call(ctx, src), errBoom)
				}
				for _, name := range breakerNames {
					want := runtime.Closed
					if name == m.breaker {
						want = runtime.Open
					}
					assert.Equal(t, want, state(t, reg, name), "breaker %s", name)
				}
				if m.breaker != "" {
					err := m.call(ctx, src) // the mock would fail the test if called
					require.ErrorIs(t, err, runtime.ErrOpen)
				}
			})
		})
	}
}

// TestStockSourceSettings: the settings the annotations give each name.
func TestStockSourceSettings(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithLogger(discard()))
	marketdata.NewStockSourceBreaker(nil, reg)
	marketdata.NewFundFlowSourceBreaker(nil, reg)
	for _, name := range breakerNames {
		b, ok := reg.Lookup(name)
		require.True(t, ok)
		want := runtime.Config{Name: name, FailureThreshold: 5, ResetTimeout: 30 * time.Second, HalfOpenMax: 1, SuccessThreshold: 1}
		switch name {
		case "push2ex":
			want.FailureThreshold, want.Throttle = 2, 1.5
		case "tdx":
			want.Concurrency = 4
		case "tencent": // a window of 50 calls instead of a consecutive count
			want.FailureThreshold = 0
			want.WindowCalls, want.FailureRate, want.MinimumCalls = 50, 0.5, 20
		}
		assert.Equal(t, want, b.Config())
	}
	rate, burst := reg.Limiter("eastmoney", 1.5, 3).Rate()
	assert.Equal(t, 1.5, rate)
	assert.Equal(t, 3, burst)
}

// TestNotFoundIsAnAnswer: ErrNotFound is excluded on every route that can
// return it, so unknown codes never trip a breaker.
func TestNotFoundIsAnAnswer(t *testing.T) {
	notFound := &marketdata.StatusError{Provider: "x", Code: 404}
	for _, m := range stockMethods {
		if m.breaker == "" || m.breaker == "push2ex" {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctrl := gomock.NewController(t)
				mock := mocks.NewMockStockSource(ctrl)
				reg := runtime.NewRegistry(runtime.WithLogger(discard()))
				src := marketdata.NewStockSourceBreaker(mock, reg)
				m.expect(mock.EXPECT(), notFound).Times(8)
				for range 8 {
					require.ErrorIs(t, m.call(t.Context(), src), marketdata.ErrNotFound)
				}
				b, _ := reg.Lookup(m.breaker)
				assert.Equal(t, runtime.Closed, b.State())
				assert.Zero(t, b.Stats().Failures)
			})
		})
	}
}

// TestFundFlowSharesEastmoney: FundFlowSource names eastmoney bare, so its
// failures open the breaker StockSource's search goes through.
func TestFundFlowSharesEastmoney(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctrl := gomock.NewController(t)
		stocks := mocks.NewMockStockSource(ctrl)
		flows := mocks.NewMockFundFlowSource(ctrl)
		reg := runtime.NewRegistry(runtime.WithLogger(discard()))
		s := marketdata.NewStockSourceBreaker(stocks, reg)
		f := marketdata.NewFundFlowSourceBreaker(flows, reg)

		// Two tries per call: five failures in three calls.
		flows.EXPECT().FundFlow(gomock.Any(), "600519").Return(marketdata.FundFlow{}, errBoom).Times(5)
		for range 3 {
			_, err := f.FundFlow(t.Context(), "600519")
			require.ErrorIs(t, err, errBoom)
		}
		_, err := s.Search(t.Context(), "gzmt") // no expectation: must not reach the mock
		require.ErrorIs(t, err, runtime.ErrOpen)
	})
}

// TestEastmoneyLimiter: the eastmoney routes share one bucket of 3 tokens
// refilled at 1.5 per second, whichever interface calls.
func TestEastmoneyLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctrl := gomock.NewController(t)
		stocks := mocks.NewMockStockSource(ctrl)
		flows := mocks.NewMockFundFlowSource(ctrl)
		reg := runtime.NewRegistry(runtime.WithLogger(discard()))
		s := marketdata.NewStockSourceBreaker(stocks, reg)
		f := marketdata.NewFundFlowSourceBreaker(flows, reg)
		stocks.EXPECT().Search(gomock.Any(), gomock.Any()).Return(nil, nil).Times(3)
		flows.EXPECT().FundFlow(gomock.Any(), gomock.Any()).Return(marketdata.FundFlow{}, nil).Times(3)

		start := time.Now()
		var at []time.Duration
		for i := range 6 {
			var err error
			if i%2 == 0 {
				_, err = s.Search(t.Context(), "gzmt")
			} else {
				_, err = f.FundFlow(t.Context(), "600519")
			}
			require.NoError(t, err)
			at = append(at, time.Since(start).Round(time.Millisecond))
		}
		assert.Equal(t, []time.Duration{0, 0, 0, 667 * time.Millisecond, 1333 * time.Millisecond, 2 * time.Second}, at)

		// A caller whose deadline comes before the next token is refused at
		// once and never reaches the source.
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := s.Search(ctx, "gzmt")
		require.ErrorIs(t, err, runtime.ErrRateLimited)
		assert.Equal(t, 2*time.Second, time.Since(start).Round(time.Millisecond))
	})
}

// TestUnguardedAndNil: Name is delegated as is; a nil implementation is an
// error, not a panic, for every method that can return one.
func TestUnguardedAndNil(t *testing.T) {
	ctrl := gomock.NewController(t)
	mock := mocks.NewMockStockSource(ctrl)
	mock.EXPECT().Name().Return("mock")
	reg := runtime.NewRegistry(runtime.WithLogger(discard()))
	assert.Equal(t, "mock", marketdata.NewStockSourceBreaker(mock, reg).Name())

	nilSrc := marketdata.NewStockSourceBreaker(nil, reg)
	for _, m := range stockMethods {
		assert.ErrorIs(t, m.call(t.Context(), nilSrc), breakerimpl.ErrNilImpl, m.name)
	}
	_, err := marketdata.NewFundFlowSourceBreaker(nil, reg).FundFlow(t.Context(), "600519")
	assert.ErrorIs(t, err, breakerimpl.ErrNilImpl)
}

// TestPanicIsAFailure: a panicking source counts as a failure of its
// breaker, and the panic reaches the caller.
func TestPanicIsAFailure(t *testing.T) {
	ctrl := gomock.NewController(t)
	mock := mocks.NewMockStockSource(ctrl)
	mock.EXPECT().Changes(gomock.Any()).DoAndReturn(func(context.Context) ([]marketdata.Change, error) {
		panic("decoder bug")
	}).Times(2)
	reg := runtime.NewRegistry(runtime.WithLogger(discard()), runtime.WithRand(rand.New(neverRefuse{})))
	src := marketdata.NewStockSourceBreaker(mock, reg)
	for range 2 {
		assert.PanicsWithValue(t, "decoder bug", func() { _, _ = src.Changes(t.Context()) })
	}
	assert.Equal(t, runtime.Open, state(t, reg, "push2ex"), "push2ex trips after 2 failures")
	ev := reg.Events(1)
	require.Len(t, ev, 1)
	assert.Contains(t, ev[0].Reason, "panic: decoder bug")
}

// TestEastmoneyRetries: eastmoney's routes make a second try after a
// transport error or a 5xx, 100ms later (the default backoff), but never
// after an answer that says to back off: a 403 ban is tried once.
func TestEastmoneyRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctrl := gomock.NewController(t)
		stocks := mocks.NewMockStockSource(ctrl)
		reg := runtime.NewRegistry(runtime.WithLogger(discard()))
		s := marketdata.NewStockSourceBreaker(stocks, reg)

		gomock.InOrder(
			stocks.EXPECT().Search(gomock.Any(), "gzmt").Return(nil, errBoom),
			stocks.EXPECT().Search(gomock.Any(), "gzmt").Return([]marketdata.Hit{{Code: "600519"}}, nil),
		)
		start := time.Now()
		hits, err := s.Search(t.Context(), "gzmt")
		require.NoError(t, err)
		assert.Len(t, hits, 1)
		assert.Equal(t, 100*time.Millisecond, time.Since(start))

		unavailable := &marketdata.StatusError{Provider: "eastmoney", Code: 503}
		stocks.EXPECT().Search(gomock.Any(), "503").Return(nil, unavailable).Times(2)
		_, err = s.Search(t.Context(), "503")
		require.ErrorIs(t, err, unavailable, "a 5xx is retried, and the last error returned")

		ban := &marketdata.CooldownError{StatusError: &marketdata.StatusError{Provider: "eastmoney", Code: 403, Wait: 30 * time.Second}}
		stocks.EXPECT().Search(gomock.Any(), "ban").Return(nil, ban).Times(1)
		_, err = s.Search(t.Context(), "ban")
		require.ErrorIs(t, err, ban)
		assert.Equal(t, runtime.Open, state(t, reg, "eastmoney"), "the ban cools eastmoney down at once")
	})
}

// TestChainNilFallback: a fallback given with a nil Impl is an error of
// that source, not a panic.
func TestChainNilFallback(t *testing.T) {
	ctrl := gomock.NewController(t)
	flows := mocks.NewMockFundFlowSource(ctrl)
	flows.EXPECT().FundFlow(gomock.Any(), "600519").Return(marketdata.FundFlow{}, assert.AnError).Times(2) // two tries
	reg := runtime.NewRegistry(runtime.WithLogger(discard()), runtime.WithoutEnv())
	chain := marketdata.NewFundFlowSourceChain(flows, reg, runtime.Fallback[marketdata.FundFlowSource]{Name: "nil"})
	var err error
	synctest.Test(t, func(t *testing.T) { // the retry's backoff
		assert.NotPanics(t, func() { _, err = chain.FundFlow(context.Background(), "600519") })
	})
	var ce *runtime.ChainError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, breakerimpl.ErrNilImpl)
	assert.ErrorIs(t, err, assert.AnError)
	assert.Contains(t, err.Error(), "fallback:nil: error: breaker: wrapped implementation is nil")
}

// TestChainNilImplTouchesNoBreaker: a Fallback without Impl, or a nil
// primary, is refused by its route without counting against the breaker,
// which other chains share by name: a working fallback of the same name
// keeps answering them, and a chain with a nil primary asks its fallbacks.
func TestChainNilImplTouchesNoBreaker(t *testing.T) {
	ctrl := gomock.NewController(t)
	reg := runtime.NewRegistry(runtime.WithLogger(discard()), runtime.WithoutEnv())
	broken := marketdata.NewFundFlowSourceChain(nil, reg, runtime.Fallback[marketdata.FundFlowSource]{Name: "sina"})
	for range 10 {
		_, err := broken.FundFlow(t.Context(), "600519")
		assert.ErrorIs(t, err, breakerimpl.ErrNilImpl)
	}
	b, ok := reg.Lookup("fallback:sina")
	require.True(t, ok)
	assert.Equal(t, runtime.Closed, b.State())
	assert.Zero(t, b.Stats().Failures, "a missing Impl is not the fallback's failure")

	sina := mocks.NewMockFundFlowSource(ctrl)
	sina.EXPECT().FundFlow(gomock.Any(), "600519").Return(marketdata.FundFlow{Code: "600519", MainNet: 1, Time: time.Unix(1, 0)}, nil)
	working := marketdata.NewFundFlowSourceChain(nil, reg, runtime.Fallback[marketdata.FundFlowSource]{Name: "sina", Impl: sina})
	ctx, p := runtime.WithProvenance(t.Context())
	f, err := working.FundFlow(ctx, "600519")
	require.NoError(t, err)
	assert.Equal(t, "600519", f.Code)
	assert.Equal(t, "fallback:sina", p.Source, "a nil primary is passed over for the fallbacks")
}
