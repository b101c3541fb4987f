package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/exporters/prometheus"
	"github.com/breakergen/breakergen/runtime"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newRegistry(opts ...runtime.Option) *runtime.Registry {
	return runtime.NewRegistry(append([]runtime.Option{runtime.WithoutEnv(),
		runtime.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
}

var errDown = errors.New("down")

func fail(context.Context) error    { return errDown }
func succeed(context.Context) error { return nil }

// gather returns every series c exports, as `name{label="value",...}`
// (labels in name order) mapped to its value.
func gather(t *testing.T, c prom.Collector) map[string]float64 {
	t.Helper()
	r := prom.NewPedanticRegistry()
	require.NoError(t, r.Register(c))
	mfs, err := r.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

const help = `
# HELP breakergen_breaker_calls_total Calls by outcome since the breaker was created or reset: success only with call counting (runtime.WithCallCounts); ignored is the caller's cancel.
# TYPE breakergen_breaker_calls_total counter
# HELP breakergen_breaker_consecutive_failures Consecutive failures towards the breaker's threshold (0 unless CLOSED).
# TYPE breakergen_breaker_consecutive_failures gauge
# HELP breakergen_breaker_state The breaker's state: 1 for the current state, 0 for the others of closed, half_open and open; an operator's isolated or bypassed is a series only while the breaker is in it.
# TYPE breakergen_breaker_state gauge
# HELP breakergen_breaker_transitions_total State transitions by from/to state since the breaker was created or reset.
# TYPE breakergen_breaker_transitions_total counter
`

func TestCollectorFamilies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry(runtime.WithCallCounts())
		ctx := context.Background()
		c := prometheus.NewCollector(reg)

		tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Second})
		require.ErrorIs(t, tdx.Do(ctx, fail), errDown)            // closed → open
		require.ErrorIs(t, tdx.Do(ctx, succeed), runtime.ErrOpen) // rejected
		time.Sleep(time.Second)                                   // open → half_open
		synctest.Wait()                                           // by the breaker's timer
		require.NoError(t, tdx.Do(ctx, succeed))                  // half_open → closed
		require.ErrorIs(t, tdx.Do(ctx, fail), errDown)            // closed → open

		em := reg.Breaker(runtime.Config{Name: "eastmoney"})
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, em.Do(canceled, func(ctx context.Context) error { return ctx.Err() }), context.Canceled)
		require.ErrorIs(t, em.Do(ctx, fail), errDown)
		require.ErrorIs(t, em.Do(ctx, fail), errDown)

		want := help + `
breakergen_breaker_calls_total{breaker="eastmoney",outcome="failure"} 2
breakergen_breaker_calls_total{breaker="eastmoney",outcome="ignored"} 1
breakergen_breaker_calls_total{breaker="eastmoney",outcome="rate_limited"} 0
breakergen_breaker_calls_total{breaker="eastmoney",outcome="rejected"} 0
breakergen_breaker_calls_total{breaker="eastmoney",outcome="success"} 0
breakergen_breaker_calls_total{breaker="tdx",outcome="failure"} 2
breakergen_breaker_calls_total{breaker="tdx",outcome="ignored"} 0
breakergen_breaker_calls_total{breaker="tdx",outcome="rate_limited"} 0
breakergen_breaker_calls_total{breaker="tdx",outcome="rejected"} 1
breakergen_breaker_calls_total{breaker="tdx",outcome="success"} 1
breakergen_breaker_consecutive_failures{breaker="eastmoney"} 2
breakergen_breaker_consecutive_failures{breaker="tdx"} 0
breakergen_breaker_state{breaker="eastmoney",state="closed"} 1
breakergen_breaker_state{breaker="eastmoney",state="half_open"} 0
breakergen_breaker_state{breaker="eastmoney",state="open"} 0
breakergen_breaker_state{breaker="tdx",state="closed"} 0
breakergen_breaker_state{breaker="tdx",state="half_open"} 0
breakergen_breaker_state{breaker="tdx",state="open"} 1
breakergen_breaker_transitions_total{breaker="eastmoney",from="closed",to="open"} 0
breakergen_breaker_transitions_total{breaker="eastmoney",from="half_open",to="closed"} 0
breakergen_breaker_transitions_total{breaker="eastmoney",from="half_open",to="open"} 0
breakergen_breaker_transitions_total{breaker="eastmoney",from="open",to="half_open"} 0
breakergen_breaker_transitions_total{breaker="tdx",from="closed",to="open"} 2
breakergen_breaker_transitions_total{breaker="tdx",from="half_open",to="closed"} 1
breakergen_breaker_transitions_total{breaker="tdx",from="half_open",to="open"} 0
breakergen_breaker_transitions_total{breaker="tdx",from="open",to="half_open"} 1
`
		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))

		problems, err := testutil.CollectAndLint(c)
		require.NoError(t, err)
		assert.Empty(t, problems)

		// Reset is a counter reset, and the state follows.
		tdx.Reset()
		got := gather(t, c)
		assert.Zero(t, got[`breakergen_breaker_transitions_total{breaker="tdx",from="closed",to="open"}`])
		assert.Zero(t, got[`breakergen_breaker_calls_total{breaker="tdx",outcome="failure"}`])
		assert.Equal(t, 1.0, got[`breakergen_breaker_state{breaker="tdx",state="closed"}`])
	})
}

func TestCollectorLeavesOutWhatTheRuntimeDoesNotCount(t *testing.T) {
	reg := newRegistry() // no call counting
	reg.Breaker(runtime.Config{Name: "plain"})
	reg.Breaker(runtime.Config{Name: "windowed", WindowCalls: 100})
	reg.Breaker(runtime.Config{Name: "bulkhead", Concurrency: 4})
	reg.Breaker(runtime.Config{Name: "hung", InFlight: time.Second})
	reg.Breaker(runtime.Config{Name: "throttled", Throttle: 2})
	got := gather(t, prometheus.NewCollector(reg))

	has := func(series string) bool { _, ok := got[series]; return ok }
	for _, name := range []string{"plain", "windowed", "bulkhead", "hung", "throttled"} {
		assert.False(t, has(`breakergen_breaker_calls_total{breaker="`+name+`",outcome="success"}`), name)
		assert.True(t, has(`breakergen_breaker_calls_total{breaker="`+name+`",outcome="rejected"}`), "%s: refusals are always counted", name)
		assert.True(t, has(`breakergen_breaker_calls_total{breaker="`+name+`",outcome="failure"}`), name)
		assert.True(t, has(`breakergen_breaker_calls_total{breaker="`+name+`",outcome="ignored"}`), name)
		assert.True(t, has(`breakergen_breaker_calls_total{breaker="`+name+`",outcome="rate_limited"}`), name)
		assert.Equal(t, name == "windowed", has(`breakergen_breaker_failure_rate{breaker="`+name+`"}`), name)
		assert.Equal(t, name == "bulkhead" || name == "hung", has(`breakergen_breaker_in_flight{breaker="`+name+`"}`), name)
		assert.Equal(t, name == "bulkhead", has(`breakergen_breaker_calls_total{breaker="`+name+`",outcome="bulkhead_full"}`), name)
		assert.Equal(t, name == "throttled", has(`breakergen_breaker_calls_total{breaker="`+name+`",outcome="throttled"}`), name)
		assert.False(t, has(`breakergen_breaker_transitions_total{breaker="`+name+`",from="open",to="closed"}`),
			"a pair the breaker does not make by itself appears once counted")
	}
	for series := range got {
		assert.False(t, strings.HasPrefix(series, "breakergen_chain_answers_total"), "no chain has answered")
	}
}

// TestCollectorRejectedWithoutCallCounts: on a registry that does not
// count every call, the calls an OPEN breaker refused are reported all
// the same, for the breaker and its family (SPEC §10: only success needs
// call counting), and the scrape passes promtool's check.
func TestCollectorRejectedWithoutCallCounts(t *testing.T) {
	reg := newRegistry() // no call counting
	ctx := context.Background()
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	require.ErrorIs(t, tdx.Do(ctx, fail), errDown)
	for range 5 {
		require.ErrorIs(t, tdx.Do(ctx, succeed), runtime.ErrOpen)
	}
	fam := reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1}, runtime.FamilyConfig{})
	require.ErrorIs(t, fam.Breaker("600519").Do(ctx, fail), errDown)
	for range 2 {
		require.ErrorIs(t, fam.Breaker("600519").Do(ctx, succeed), runtime.ErrOpen)
	}
	c := prometheus.NewCollector(reg)
	got := gather(t, c)
	assert.Equal(t, 5.0, got[`breakergen_breaker_calls_total{breaker="tdx",outcome="rejected"}`])
	assert.Equal(t, 1.0, got[`breakergen_breaker_calls_total{breaker="tdx",outcome="failure"}`])
	assert.NotContains(t, got, `breakergen_breaker_calls_total{breaker="tdx",outcome="success"}`, "success needs call counting")
	assert.Equal(t, 2.0, got[`breakergen_family_calls_total{family="quote",outcome="rejected"}`])
	assert.NotContains(t, got, `breakergen_family_calls_total{family="quote",outcome="success"}`)

	r := prom.NewRegistry()
	r.MustRegister(c)
	out, ok := promtool(t, strings.NewReader(scrapeOf(t, r)), "check", "metrics")
	assert.True(t, ok, "promtool check metrics:\n%s", out)
	assert.Empty(t, strings.TrimSpace(out), "no lint problems")
}

func TestCollectorSeesBreakersCreatedLater(t *testing.T) {
	reg := newRegistry()
	c := prometheus.NewCollector(reg)
	r := prom.NewRegistry()
	r.MustRegister(c)
	n, err := testutil.GatherAndCount(r, "breakergen_breaker_state")
	require.NoError(t, err)
	assert.Zero(t, n)

	b := reg.Breaker(runtime.Config{Name: "late", FailureThreshold: 1})
	require.ErrorIs(t, b.Do(context.Background(), fail), errDown)
	n, err = testutil.GatherAndCount(r, "breakergen_breaker_state")
	require.NoError(t, err)
	assert.Equal(t, 3, n, "closed, half_open and open (SPEC §10)")
	want := `
# HELP breakergen_breaker_state The breaker's state: 1 for the current state, 0 for the others of closed, half_open and open; an operator's isolated or bypassed is a series only while the breaker is in it.
# TYPE breakergen_breaker_state gauge
breakergen_breaker_state{breaker="late",state="closed"} 0
breakergen_breaker_state{breaker="late",state="half_open"} 0
breakergen_breaker_state{breaker="late",state="open"} 1
`
	require.NoError(t, testutil.GatherAndCompare(r, strings.NewReader(want), "breakergen_breaker_state"))
}

func TestCollectorChainAnswers(t *testing.T) {
	c := prometheus.NewCollector(newRegistry())
	prometheus.SetChainAnswers(c, func() []runtime.ChainAnswer {
		return []runtime.ChainAnswer{
			{Source: "eastmoney", Kind: "live", Count: 40},
			{Source: "fallback:sina", Kind: "fallback", Count: 3},
			{Source: "stale", Kind: "stale", Count: 2},
		}
	})
	want := `
# HELP breakergen_chain_answers_total Answers of generated chains by source (breaker name, a family's name for its keys, or stale) and kind (live, fallback, stale, hedged, none).
# TYPE breakergen_chain_answers_total counter
breakergen_chain_answers_total{kind="fallback",source="fallback:sina"} 3
breakergen_chain_answers_total{kind="live",source="eastmoney"} 40
breakergen_chain_answers_total{kind="stale",source="stale"} 2
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestNewCollectorNilIsTheDefaultRegistry(t *testing.T) {
	name := "prometheus-test-default"
	runtime.Default().Breaker(runtime.Config{Name: name})
	got := gather(t, prometheus.NewCollector(nil))
	assert.Contains(t, got, `breakergen_breaker_state{breaker="`+name+`",state="closed"}`)
}

// TestCollectorScrapesWhileCalling scrapes while goroutines call, trip and
// reset breakers (for the race detector: the collector only reads
// snapshots).
func TestCollectorScrapesWhileCalling(t *testing.T) {
	reg := newRegistry(runtime.WithCallCounts())
	r := prom.NewRegistry()
	r.MustRegister(prometheus.NewCollector(reg))
	ctx := context.Background()
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			b := reg.Breaker(runtime.Config{Name: fmt.Sprintf("b%d", g%2), FailureThreshold: 3})
			for i := range 2000 {
				switch {
				case i%500 == 0:
					b.Reset()
				case i%50 < 3: // trips; OPEN rejects the calls until the next reset
					_ = b.Do(ctx, fail)
				default:
					_ = b.Do(ctx, succeed)
				}
			}
		}()
	}
	for range 50 {
		_, err := r.Gather()
		require.NoError(t, err)
	}
	for range 4 {
		<-done
	}
	n, err := testutil.GatherAndCount(r, "breakergen_breaker_state")
	require.NoError(t, err)
	assert.Equal(t, 6, n, "two breakers, three states each (SPEC §10): no operator's mode")
}

// TestCollectorOperatorModes: SPEC §14's states reach the state gauge as
// isolated and bypassed, and a mode's transitions are counted.
func TestCollectorOperatorModes(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	reg.Breaker(runtime.Config{Name: "em"}).Isolate("maintenance")
	reg.Breaker(runtime.Config{Name: "sina"}).Bypass("watching")
	r := prom.NewRegistry()
	r.MustRegister(prometheus.NewCollector(reg))
	want := `
# HELP breakergen_breaker_transitions_total State transitions by from/to state since the breaker was created or reset.
# TYPE breakergen_breaker_transitions_total counter
breakergen_breaker_transitions_total{breaker="em",from="closed",to="isolated"} 1
breakergen_breaker_transitions_total{breaker="em",from="closed",to="open"} 0
breakergen_breaker_transitions_total{breaker="em",from="half_open",to="closed"} 0
breakergen_breaker_transitions_total{breaker="em",from="half_open",to="open"} 0
breakergen_breaker_transitions_total{breaker="em",from="open",to="half_open"} 0
breakergen_breaker_transitions_total{breaker="sina",from="closed",to="bypassed"} 1
breakergen_breaker_transitions_total{breaker="sina",from="closed",to="open"} 0
breakergen_breaker_transitions_total{breaker="sina",from="half_open",to="closed"} 0
breakergen_breaker_transitions_total{breaker="sina",from="half_open",to="open"} 0
breakergen_breaker_transitions_total{breaker="sina",from="open",to="half_open"} 0
`
	require.NoError(t, testutil.GatherAndCompare(r, strings.NewReader(want), "breakergen_breaker_transitions_total"))
	mfs, err := r.Gather()
	require.NoError(t, err)
	on := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "breakergen_breaker_state" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetGauge().GetValue() == 1 {
				on[m.GetLabel()[0].GetValue()+" "+m.GetLabel()[1].GetValue()] = true
			}
		}
	}
	assert.Equal(t, map[string]bool{"em isolated": true, "sina bypassed": true}, on)
	n, err := testutil.GatherAndCount(r, "breakergen_breaker_state")
	require.NoError(t, err)
	assert.Equal(t, 8, n, "each breaker's three states and the mode it is in, not the other mode")

	reg.Breaker(runtime.Config{Name: "em"}).Resume("done")
	n, err = testutil.GatherAndCount(r, "breakergen_breaker_state")
	require.NoError(t, err)
	assert.Equal(t, 7, n, "resumed: em's mode series is gone")
}

// TestCollectorFamilyTotals: a family is reported as one, by its totals
// (which keep what dropped keys counted, so they never go down) and the
// gauges of its keys; WithPerKey adds a breaker series per live key.
func TestCollectorFamilyTotals(t *testing.T) {
	reg := newRegistry(runtime.WithCallCounts())
	ctx := context.Background()
	fam := reg.Family(runtime.Config{Name: "api", FailureThreshold: 1}, runtime.FamilyConfig{Keys: 3})
	reg.Breaker(runtime.Config{Name: "plain/x"}) // no family of that name: a breaker as ever
	def, perKey := prometheus.NewCollector(reg), prometheus.NewCollector(reg, prometheus.WithPerKey())

	var last float64
	for i := range 10 {
		k := fam.Enter(fmt.Sprint("host", i))
		require.ErrorIs(t, k.Breaker().Do(ctx, fail), errDown)
		k.Done()
		got := gather(t, def)
		n := got[`breakergen_family_calls_total{family="api",outcome="failure"}`]
		assert.Equal(t, float64(i+1), n, "every failure, dropped keys' included")
		assert.GreaterOrEqual(t, n, last)
		last = n
		assert.Equal(t, float64(i+1), got[`breakergen_family_transitions_total{family="api",from="closed",to="open"}`])
	}
	// Each key tripped: OPEN keys are never dropped, so all ten are live.
	got := gather(t, def)
	assert.Equal(t, 10.0, got[`breakergen_family_keys{family="api"}`])
	assert.Equal(t, 10.0, got[`breakergen_family_open_keys{family="api"}`])
	assert.Equal(t, 3.0, got[`breakergen_family_key_limit{family="api"}`])
	assert.Contains(t, got, `breakergen_breaker_state{breaker="plain/x",state="closed"}`)
	for series := range got {
		assert.NotContains(t, series, `breaker="api/`, "no series per key by default")
	}

	got = gather(t, perKey)
	assert.Equal(t, 1.0, got[`breakergen_breaker_state{breaker="api/host3",state="open"}`])
	assert.Equal(t, 10.0, got[`breakergen_family_open_keys{family="api"}`], "the totals too")
}

// flows is a FundFlowSource that always answers.
type flows struct{}

func (flows) FundFlow(_ context.Context, code string) (marketdata.FundFlow, error) {
	return marketdata.FundFlow{Code: code, MainNet: 1, Time: time.Unix(1, 0)}, nil
}

// TestCollectorCleansLabelValues: a name that is not valid UTF-8 (a
// breaker's, a family key's, a generated chain's fallback's) is reported
// with U+FFFD for its invalid bytes, and the scrape succeeds; client_golang
// refuses such a label value, and one refused series used to fail the
// whole scrape (promhttp answered 500). Valid names are kept as they are.
func TestCollectorCleansLabelValues(t *testing.T) {
	reg := newRegistry(runtime.WithCallCounts())
	reg.Breaker(runtime.Config{Name: "bad\xff"})
	users := reg.Family(runtime.Config{Name: "users"}, runtime.FamilyConfig{})
	users.Enter("caf\xe9").Done() // a key from a request's header, say
	users.Enter("café").Done()
	reg.Family(runtime.Config{Name: "fam\xff"}, runtime.FamilyConfig{})
	chain := marketdata.NewFundFlowSourceChain(nil, reg, runtime.Fallback[marketdata.FundFlowSource]{Name: "sina\xff", Impl: flows{}})
	_, err := chain.FundFlow(t.Context(), "600519")
	require.NoError(t, err)

	r := prom.NewRegistry()
	r.MustRegister(prometheus.NewCollector(reg, prometheus.WithPerKey()))
	_, err = r.Gather()
	require.NoError(t, err)

	scrape := scrapeOf(t, r)
	for _, line := range []string{
		"breakergen_breaker_state{breaker=\"bad\uFFFD\",state=\"closed\"} 1",
		"breakergen_breaker_state{breaker=\"users/caf\uFFFD\",state=\"closed\"} 1",
		`breakergen_breaker_state{breaker="users/café",state="closed"} 1`,
		"breakergen_breaker_state{breaker=\"fallback:sina\uFFFD\",state=\"closed\"} 1",
		"breakergen_breaker_calls_total{breaker=\"fallback:sina\uFFFD\",outcome=\"success\"} 1",
		"breakergen_chain_answers_total{kind=\"fallback\",source=\"fallback:sina\uFFFD\"} 1",
		`breakergen_family_keys{family="users"} 2`,
		"breakergen_family_keys{family=\"fam\uFFFD\"} 0",
	} {
		assert.Contains(t, scrape, line+"\n")
	}
	out, ok := promtool(t, strings.NewReader(scrape), "check", "metrics")
	assert.True(t, ok, "promtool check metrics:\n%s\nscrape:\n%s", out, scrape)
}

// TestCollectorCleanedNamesDoNotCollide: names that clean to the same
// label value are reported once, not as two series with the same labels
// (which fail the whole scrape); a name that needed no cleaning wins over
// those that did, so a key cannot displace the breaker it cleans to.
func TestCollectorCleanedNamesDoNotCollide(t *testing.T) {
	reg := newRegistry()
	reg.Breaker(runtime.Config{Name: "dup\xc0"}) // sorts before the valid name
	reg.Breaker(runtime.Config{Name: "dup\xff"})
	kept := reg.Breaker(runtime.Config{Name: "dup\uFFFD", FailureThreshold: 1})
	require.ErrorIs(t, kept.Do(context.Background(), fail), errDown) // OPEN, the others CLOSED
	reg.Breaker(runtime.Config{Name: "pair\xfe"})
	reg.Breaker(runtime.Config{Name: "pair\xff\xfe"}) // a run of invalid bytes is one U+FFFD
	reg.Family(runtime.Config{Name: "fam\xfe"}, runtime.FamilyConfig{})
	reg.Family(runtime.Config{Name: "fam\xff"}, runtime.FamilyConfig{})
	users := reg.Family(runtime.Config{Name: "users"}, runtime.FamilyConfig{})
	users.Enter("caf\xe8").Done()
	users.Enter("caf\xe9").Done()
	c := prometheus.NewCollector(reg, prometheus.WithPerKey())
	prometheus.SetChainAnswers(c, func() []runtime.ChainAnswer {
		return []runtime.ChainAnswer{
			{Source: "fallback:sina\xfe", Kind: "fallback", Count: 1},
			{Source: "fallback:sina\xff", Kind: "fallback", Count: 2},
			{Source: "fallback:sina\xff", Kind: "hedged", Count: 3},
		}
	})
	got := gather(t, c) // fails on two series with the same labels
	assert.Equal(t, 1.0, got["breakergen_breaker_state{breaker=\"dup\uFFFD\",state=\"open\"}"], "the valid name's breaker")
	assert.Contains(t, got, "breakergen_breaker_state{breaker=\"pair\uFFFD\",state=\"open\"}")
	assert.Contains(t, got, "breakergen_breaker_state{breaker=\"users/caf\uFFFD\",state=\"open\"}")
	assert.Contains(t, got, "breakergen_family_keys{family=\"fam\uFFFD\"}")
	assert.Equal(t, 1.0, got["breakergen_chain_answers_total{kind=\"fallback\",source=\"fallback:sina\uFFFD\"}"], "the first")
	assert.Equal(t, 3.0, got["breakergen_chain_answers_total{kind=\"hedged\",source=\"fallback:sina\uFFFD\"}"])
	n := 0
	for series := range got {
		if strings.HasPrefix(series, "breakergen_breaker_state{") {
			n++
		}
	}
	assert.Equal(t, 3*3, n, "dup\uFFFD, pair\uFFFD and users/caf\uFFFD, three states each")
}
