package otel_test

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
	"unicode/utf8"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/exporters/otel"
	"github.com/breakergen/breakergen/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func newRegistry(opts ...runtime.Option) *runtime.Registry {
	return runtime.NewRegistry(append([]runtime.Option{runtime.WithoutEnv(),
		runtime.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
}

var errDown = errors.New("down")

func fail(context.Context) error    { return errDown }
func succeed(context.Context) error { return nil }

func newMeter() (metric.Meter, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("breakergen-test"), reader
}

// point is one data point: its instrument's kind and its value.
type point struct {
	kind  string // "gauge", "counter" (monotonic cumulative sum) or "updown"
	value float64
}

// collect returns every data point the reader collects, keyed by
// `instrument{key=value,...}` with the attributes in key order.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]point{}
	key := func(name string, set attribute.Set) string {
		var kv []string
		for _, a := range set.ToSlice() {
			kv = append(kv, fmt.Sprintf("%s=%s", a.Key, a.Value.String()))
		}
		slices.Sort(kv)
		return name + "{" + strings.Join(kv, ",") + "}"
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] = point{"gauge", float64(p.Value)}
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] = point{"gauge", p.Value}
				}
			case metricdata.Sum[int64]:
				kind := "updown"
				if d.IsMonotonic {
					kind = "counter"
					assert.Equal(t, metricdata.CumulativeTemporality, d.Temporality, m.Name)
				}
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] = point{kind, float64(p.Value)}
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

func TestRegisterObservesTheBreakers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry(runtime.WithCallCounts())
		m, reader := newMeter()
		_, err := otel.RegisterWithAnswers(reg, m, func() []runtime.ChainAnswer {
			return []runtime.ChainAnswer{{Source: "tdx", Kind: "live", Count: 7}, {Source: "stale", Kind: "stale", Count: 2}}
		})
		require.NoError(t, err)
		ctx := context.Background()

		tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Second})
		require.ErrorIs(t, tdx.Do(ctx, fail), errDown)            // closed → open
		require.ErrorIs(t, tdx.Do(ctx, succeed), runtime.ErrOpen) // rejected
		time.Sleep(time.Second)
		synctest.Wait()                          // open → half_open, by the breaker's timer
		require.NoError(t, tdx.Do(ctx, succeed)) // half_open → closed
		em := reg.Breaker(runtime.Config{Name: "eastmoney"})
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, em.Do(canceled, func(ctx context.Context) error { return ctx.Err() }), context.Canceled)
		require.ErrorIs(t, em.Do(ctx, fail), errDown)
		reg.Breaker(runtime.Config{Name: "windowed", WindowCalls: 100})
		reg.Breaker(runtime.Config{Name: "bulkhead", Concurrency: 4})
		reg.Breaker(runtime.Config{Name: "throttled", Throttle: 2})

		got := collect(t, reader)
		want := map[string]point{
			"breakergen.breaker.state{circuitbreaker.name=tdx,circuitbreaker.state=closed}":    {"gauge", 1},
			"breakergen.breaker.state{circuitbreaker.name=tdx,circuitbreaker.state=half_open}": {"gauge", 0},
			"breakergen.breaker.state{circuitbreaker.name=tdx,circuitbreaker.state=open}":      {"gauge", 0},

			"breakergen.breaker.calls{breakergen.outcome=success,circuitbreaker.name=tdx}":       {"counter", 1},
			"breakergen.breaker.calls{breakergen.outcome=failure,circuitbreaker.name=tdx}":       {"counter", 1},
			"breakergen.breaker.calls{breakergen.outcome=ignored,circuitbreaker.name=tdx}":       {"counter", 0},
			"breakergen.breaker.calls{breakergen.outcome=rejected,circuitbreaker.name=tdx}":      {"counter", 1},
			"breakergen.breaker.calls{breakergen.outcome=rate_limited,circuitbreaker.name=tdx}":  {"counter", 0},
			"breakergen.breaker.calls{breakergen.outcome=ignored,circuitbreaker.name=eastmoney}": {"counter", 1},
			"breakergen.breaker.calls{breakergen.outcome=failure,circuitbreaker.name=eastmoney}": {"counter", 1},

			"breakergen.breaker.transitions{breakergen.from_state=closed,breakergen.to_state=open,circuitbreaker.name=tdx}":      {"counter", 1},
			"breakergen.breaker.transitions{breakergen.from_state=open,breakergen.to_state=half_open,circuitbreaker.name=tdx}":   {"counter", 1},
			"breakergen.breaker.transitions{breakergen.from_state=half_open,breakergen.to_state=closed,circuitbreaker.name=tdx}": {"counter", 1},
			"breakergen.breaker.transitions{breakergen.from_state=half_open,breakergen.to_state=open,circuitbreaker.name=tdx}":   {"counter", 0},

			"breakergen.breaker.consecutive_failures{circuitbreaker.name=eastmoney}": {"gauge", 1},
			"breakergen.breaker.failure_rate{circuitbreaker.name=windowed}":          {"gauge", 0},
			"breakergen.breaker.in_flight{circuitbreaker.name=bulkhead}":             {"updown", 0},

			"breakergen.breaker.calls{breakergen.outcome=bulkhead_full,circuitbreaker.name=bulkhead}": {"counter", 0},
			"breakergen.breaker.calls{breakergen.outcome=throttled,circuitbreaker.name=throttled}":    {"counter", 0},

			"breakergen.chain.answers{breakergen.chain.kind=live,breakergen.chain.source=tdx}":    {"counter", 7},
			"breakergen.chain.answers{breakergen.chain.kind=stale,breakergen.chain.source=stale}": {"counter", 2},
		}
		for k, v := range want {
			if assert.Contains(t, got, k) {
				assert.Equal(t, v, got[k], k)
			}
		}
		for k := range got {
			assert.False(t, strings.HasPrefix(k, "breakergen.breaker.failure_rate") && !strings.Contains(k, "=windowed}"),
				"failure_rate only with a window: %s", k)
			assert.False(t, strings.HasPrefix(k, "breakergen.breaker.in_flight") && !strings.Contains(k, "=bulkhead}"),
				"in_flight only with concurrency or inflight: %s", k)
			assert.False(t, strings.Contains(k, "outcome=throttled") && !strings.Contains(k, "=throttled}"), k)
			assert.False(t, strings.Contains(k, "outcome=bulkhead_full") && !strings.Contains(k, "=bulkhead}"), k)
		}
		assert.NotContains(t, got, "breakergen.breaker.transitions{breakergen.from_state=open,breakergen.to_state=closed,circuitbreaker.name=tdx}",
			"a pair the breaker does not make by itself appears once counted")

		tdx.Reset() // a reset of the count
		got = collect(t, reader)
		assert.Zero(t, got["breakergen.breaker.transitions{breakergen.from_state=closed,breakergen.to_state=open,circuitbreaker.name=tdx}"].value)
	})
}

// TestRegisterWithoutCallCountsLeavesOutSuccess: without call counting
// success is left out, but the calls an OPEN breaker refused are counted
// all the same (SPEC §10: only success needs call counting).
func TestRegisterWithoutCallCountsLeavesOutSuccess(t *testing.T) {
	reg := newRegistry()
	m, reader := newMeter()
	_, err := otel.Register(reg, m)
	require.NoError(t, err)
	b := reg.Breaker(runtime.Config{Name: "plain", FailureThreshold: 1})
	require.NoError(t, b.Do(context.Background(), succeed))
	require.ErrorIs(t, b.Do(context.Background(), fail), errDown)
	for range 5 {
		require.ErrorIs(t, b.Do(context.Background(), succeed), runtime.ErrOpen)
	}

	got := collect(t, reader)
	assert.NotContains(t, got, "breakergen.breaker.calls{breakergen.outcome=success,circuitbreaker.name=plain}")
	assert.Equal(t, point{"counter", 5}, got["breakergen.breaker.calls{breakergen.outcome=rejected,circuitbreaker.name=plain}"])
	assert.Equal(t, point{"counter", 1}, got["breakergen.breaker.calls{breakergen.outcome=failure,circuitbreaker.name=plain}"])
	assert.Equal(t, point{"gauge", 1}, got["breakergen.breaker.state{circuitbreaker.name=plain,circuitbreaker.state=open}"])
	for k := range got {
		assert.False(t, strings.HasPrefix(k, "breakergen.chain.answers"), "no chain has answered: %s", k)
	}
}

func TestRegisterSeesLaterBreakersUntilUnregistered(t *testing.T) {
	reg := newRegistry()
	m, reader := newMeter()
	r, err := otel.Register(reg, m)
	require.NoError(t, err)
	assert.Empty(t, collect(t, reader))

	reg.Breaker(runtime.Config{Name: "late"})
	assert.Contains(t, collect(t, reader), "breakergen.breaker.state{circuitbreaker.name=late,circuitbreaker.state=closed}")

	require.NoError(t, r.Unregister())
	assert.Empty(t, collect(t, reader))
}

func TestRegisterNilArguments(t *testing.T) {
	_, err := otel.Register(nil, noop.NewMeterProvider().Meter("x"))
	assert.EqualError(t, err, "otel: Register: nil *runtime.Registry")
	_, err = otel.Register(newRegistry(), nil)
	assert.EqualError(t, err, "otel: Register: nil metric.Meter")
}

// TestRegisterCollectsWhileCalling collects while goroutines call, trip
// and reset breakers (for the race detector).
func TestRegisterCollectsWhileCalling(t *testing.T) {
	reg := newRegistry(runtime.WithCallCounts())
	m, reader := newMeter()
	_, err := otel.Register(reg, m)
	require.NoError(t, err)
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
		collect(t, reader)
	}
	for range 4 {
		<-done
	}
	got := collect(t, reader)
	assert.Contains(t, got, "breakergen.breaker.state{circuitbreaker.name=b0,circuitbreaker.state=open}")
	assert.Contains(t, got, "breakergen.breaker.state{circuitbreaker.name=b1,circuitbreaker.state=open}")
}

// TestRegisterObservesOperatorModes: SPEC §14's states reach the state
// gauge as isolated and bypassed, and a mode's transitions are counted.
func TestRegisterObservesOperatorModes(t *testing.T) {
	reg := newRegistry()
	m, reader := newMeter()
	_, err := otel.Register(reg, m)
	require.NoError(t, err)
	reg.Breaker(runtime.Config{Name: "em"}).Isolate("maintenance")
	reg.Breaker(runtime.Config{Name: "sina"}).Bypass("watching")
	got := collect(t, reader)
	assert.Equal(t, point{"gauge", 1}, got["breakergen.breaker.state{circuitbreaker.name=em,circuitbreaker.state=isolated}"])
	assert.Equal(t, point{"gauge", 0}, got["breakergen.breaker.state{circuitbreaker.name=em,circuitbreaker.state=closed}"])
	assert.Equal(t, point{"gauge", 1}, got["breakergen.breaker.state{circuitbreaker.name=sina,circuitbreaker.state=bypassed}"])
	assert.NotContains(t, got, "breakergen.breaker.state{circuitbreaker.name=em,circuitbreaker.state=bypassed}",
		"a mode the breaker is not in has no series")
	assert.Equal(t, point{"counter", 1},
		got["breakergen.breaker.transitions{breakergen.from_state=closed,breakergen.to_state=isolated,circuitbreaker.name=em}"])
}

// TestRegisterObservesFamiliesAsOne: a family is observed by its totals
// (which keep what dropped keys counted, so they never go down) and the
// gauges of its keys; WithPerKey adds each live key as a breaker.
func TestRegisterObservesFamiliesAsOne(t *testing.T) {
	reg := newRegistry(runtime.WithCallCounts())
	ctx := context.Background()
	fam := reg.Family(runtime.Config{Name: "api", FailureThreshold: 2}, runtime.FamilyConfig{Keys: 3})
	m, reader := newMeter()
	_, err := otel.Register(reg, m)
	require.NoError(t, err)
	mk, readerKeys := newMeter()
	_, err = otel.Register(reg, mk, otel.WithPerKey())
	require.NoError(t, err)

	var last float64
	for i := range 10 {
		k := fam.Enter(fmt.Sprint("host", i))
		require.NoError(t, k.Breaker().Do(ctx, succeed))
		k.Done()
		got := collect(t, reader)
		n := got["breakergen.family.calls{breakergen.family=api,breakergen.outcome=success}"]
		assert.Equal(t, point{"counter", float64(i + 1)}, n, "every success, dropped keys' included")
		assert.GreaterOrEqual(t, n.value, last)
		last = n.value
	}
	failOn := fam.Breaker("host9")
	require.ErrorIs(t, failOn.Do(ctx, fail), errDown)
	require.ErrorIs(t, failOn.Do(ctx, fail), errDown) // host9 OPEN

	got := collect(t, reader)
	assert.Equal(t, point{"updown", 3}, got["breakergen.family.keys{breakergen.family=api}"])
	assert.Equal(t, point{"updown", 1}, got["breakergen.family.open_keys{breakergen.family=api}"])
	assert.Equal(t, point{"gauge", 3}, got["breakergen.family.key_limit{breakergen.family=api}"])
	assert.Equal(t, point{"counter", 7}, got["breakergen.family.dropped_keys{breakergen.family=api}"])
	assert.Equal(t, point{"counter", 1},
		got["breakergen.family.transitions{breakergen.family=api,breakergen.from_state=closed,breakergen.to_state=open}"])
	for k := range got {
		assert.NotContains(t, k, "circuitbreaker.name=api/", "no attribute set per key by default")
	}

	got = collect(t, readerKeys)
	assert.Equal(t, point{"gauge", 1}, got["breakergen.breaker.state{circuitbreaker.name=api/host9,circuitbreaker.state=open}"])
	assert.Equal(t, point{"updown", 1}, got["breakergen.family.open_keys{breakergen.family=api}"], "the totals too")
}

// flows is a FundFlowSource that always answers.
type flows struct{}

func (flows) FundFlow(_ context.Context, code string) (marketdata.FundFlow, error) {
	return marketdata.FundFlow{Code: code, MainNet: 1, Time: time.Unix(1, 0)}, nil
}

// assertValidUTF8 asserts that every attribute value of got is valid UTF-8.
func assertValidUTF8(t *testing.T, got map[string]point) {
	t.Helper()
	var invalid []string
	for k := range got {
		if !utf8.ValidString(k) {
			invalid = append(invalid, k)
		}
	}
	assert.Empty(t, invalid)
}

// TestRegisterCleansNames: a name that is not valid UTF-8 (a breaker's, a
// family key's, a generated chain's fallback's) is observed with U+FFFD
// for its invalid bytes. The SDK's reader takes such a value, but an OTLP
// exporter cannot marshal it and drops the whole batch (protobuf strings
// are UTF-8), and the values are documented as the Prometheus exporter's.
// Valid names are kept as they are.
func TestRegisterCleansNames(t *testing.T) {
	reg := newRegistry(runtime.WithCallCounts())
	reg.Breaker(runtime.Config{Name: "bad\xff"})
	users := reg.Family(runtime.Config{Name: "users"}, runtime.FamilyConfig{})
	users.Enter("caf\xe9").Done() // a key from a request's header, say
	users.Enter("café").Done()
	reg.Family(runtime.Config{Name: "fam\xff"}, runtime.FamilyConfig{})
	chain := marketdata.NewFundFlowSourceChain(nil, reg, runtime.Fallback[marketdata.FundFlowSource]{Name: "sina\xff", Impl: flows{}})
	_, err := chain.FundFlow(t.Context(), "600519")
	require.NoError(t, err)
	m, reader := newMeter()
	_, err = otel.Register(reg, m, otel.WithPerKey())
	require.NoError(t, err)

	got := collect(t, reader)
	assertValidUTF8(t, got)
	for k, v := range map[string]point{
		"breakergen.breaker.state{circuitbreaker.name=bad\uFFFD,circuitbreaker.state=closed}":                  {"gauge", 1},
		"breakergen.breaker.state{circuitbreaker.name=users/caf\uFFFD,circuitbreaker.state=closed}":            {"gauge", 1},
		"breakergen.breaker.state{circuitbreaker.name=users/café,circuitbreaker.state=closed}":                 {"gauge", 1},
		"breakergen.breaker.calls{breakergen.outcome=success,circuitbreaker.name=fallback:sina\uFFFD}":         {"counter", 1},
		"breakergen.chain.answers{breakergen.chain.kind=fallback,breakergen.chain.source=fallback:sina\uFFFD}": {"counter", 1},
		"breakergen.family.keys{breakergen.family=users}":                                                      {"updown", 2},
		"breakergen.family.keys{breakergen.family=fam\uFFFD}":                                                  {"updown", 0},
	} {
		if assert.Contains(t, got, k) {
			assert.Equal(t, v, got[k], k)
		}
	}
}

// TestRegisterCleanedNamesDoNotCollide: names that clean to the same value
// are observed once, not twice with one attribute set; a name that needed
// no cleaning wins over those that did, so a key cannot displace the
// breaker it cleans to.
func TestRegisterCleanedNamesDoNotCollide(t *testing.T) {
	reg := newRegistry(runtime.WithCallCounts())
	reg.Breaker(runtime.Config{Name: "dup\xc0"}) // sorts before the valid name
	reg.Breaker(runtime.Config{Name: "dup\xff"})
	kept := reg.Breaker(runtime.Config{Name: "dup\uFFFD", FailureThreshold: 1})
	require.ErrorIs(t, kept.Do(context.Background(), fail), errDown) // OPEN, the others CLOSED
	reg.Family(runtime.Config{Name: "fam\xfe", FailureThreshold: 1}, runtime.FamilyConfig{Keys: 7})
	reg.Family(runtime.Config{Name: "fam\xff"}, runtime.FamilyConfig{Keys: 9})
	users := reg.Family(runtime.Config{Name: "users", FailureThreshold: 1}, runtime.FamilyConfig{})
	users.Enter("caf\xe8").Done()
	require.ErrorIs(t, users.Breaker("caf\xe9").Do(context.Background(), fail), errDown)
	for i, name := range []string{"sina\xfe", "sina\xff", "sina\xff"} { // answers: 1 and 2
		chain := marketdata.NewFundFlowSourceChain(nil, reg, runtime.Fallback[marketdata.FundFlowSource]{Name: name, Impl: flows{}})
		_, err := chain.FundFlow(t.Context(), fmt.Sprint(i))
		require.NoError(t, err)
	}
	m, reader := newMeter()
	_, err := otel.Register(reg, m, otel.WithPerKey())
	require.NoError(t, err)

	got := collect(t, reader)
	assertValidUTF8(t, got)
	assert.Equal(t, point{"gauge", 1}, got["breakergen.breaker.state{circuitbreaker.name=dup\uFFFD,circuitbreaker.state=open}"], "the valid name's breaker")
	assert.Equal(t, point{"gauge", 0}, got["breakergen.breaker.state{circuitbreaker.name=users/caf\uFFFD,circuitbreaker.state=open}"], "the first key")
	assert.Equal(t, point{"gauge", 7}, got["breakergen.family.key_limit{breakergen.family=fam\uFFFD}"], "the first family")
	assert.Equal(t, point{"counter", 1}, got["breakergen.chain.answers{breakergen.chain.kind=fallback,breakergen.chain.source=fallback:sina\uFFFD}"], "the first source")
	n := 0
	for k := range got {
		if strings.HasPrefix(k, "breakergen.breaker.state{") {
			n++
		}
	}
	assert.Equal(t, 4*3, n, "dup\uFFFD, eastmoney (the chains' primary), fallback:sina\uFFFD and users/caf\uFFFD, three states each")
}
