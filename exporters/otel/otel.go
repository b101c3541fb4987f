package otel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/breakergen/breakergen/internal/failseries"
	"github.com/breakergen/breakergen/internal/labelvalue"
	"github.com/breakergen/breakergen/runtime"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The attribute keys: circuitbreaker.name and circuitbreaker.state are
// those of OpenTelemetry's circuit-breaker semantic convention proposal;
// the others are breakergen's own.
const (
	nameKey    = attribute.Key("circuitbreaker.name")
	stateKey   = attribute.Key("circuitbreaker.state")
	outcomeKey = attribute.Key("breakergen.outcome")
	fromKey    = attribute.Key("breakergen.from_state")
	toKey      = attribute.Key("breakergen.to_state")
	sourceKey  = attribute.Key("breakergen.chain.source")
	kindKey    = attribute.Key("breakergen.chain.kind")
	familyKey  = attribute.Key("breakergen.family")
)

// states are the breaker states in the order of their values, the
// operator's modes (SPEC §14) last.
var states = [...]runtime.State{runtime.Closed, runtime.HalfOpen, runtime.Open, runtime.Isolated, runtime.Bypassed}

// own are the transitions a breaker makes by itself, observed from the
// start at 0; other pairs once counted.
var own = map[[2]runtime.State]bool{
	{runtime.Closed, runtime.Open}:     true,
	{runtime.Open, runtime.HalfOpen}:   true,
	{runtime.HalfOpen, runtime.Closed}: true,
	{runtime.HalfOpen, runtime.Open}:   true,
}

// stateValue returns the attribute value of s: "closed", "half_open",
// "open", "isolated" or "bypassed".
func stateValue(s runtime.State) string { return strings.ToLower(s.String()) }

// instruments are the observable instruments of one registration.
type instruments struct {
	state        metric.Int64ObservableGauge
	calls        metric.Int64ObservableCounter
	transitions  metric.Int64ObservableCounter
	consecutive  metric.Int64ObservableGauge
	failureRate  metric.Float64ObservableGauge
	inFlight     metric.Int64ObservableUpDownCounter
	chainAnswers metric.Int64ObservableCounter

	// A family of per-key breakers (runtime.Family) as one.
	famCalls       metric.Int64ObservableCounter
	famTransitions metric.Int64ObservableCounter
	famKeys        metric.Int64ObservableUpDownCounter
	famOpenKeys    metric.Int64ObservableUpDownCounter
	famKeyLimit    metric.Int64ObservableGauge
	famDropped     metric.Int64ObservableCounter
	famKeptClosed  metric.Int64ObservableCounter
}

// Option configures [Register].
type Option func(*options)

type options struct{ perKey bool }

// WithPerKey makes Register observe each live key of a family
// (runtime.Family) as a breaker of its own, circuitbreaker.name
// "<family>/<key>", in the breakergen.breaker.* instruments, besides the
// family's totals. Without it a family's keys are in its
// breakergen.family.* instruments only, so that the number of attribute
// sets grows with the families, not with their keys; with it, by up to
// keys=N breakers per family.
func WithPerKey() Option { return func(o *options) { o.perKey = true } }

// Register creates breakergen's observable instruments on m and a callback
// that reads reg whenever m's reader collects: the calls pay nothing for
// it, and breakers created later are included. Unregister the returned
// Registration to stop observing (the instruments stay, with no more
// data). A nil reg or m is an error.
//
// A family of per-key breakers is observed as one, in the
// breakergen.family.* instruments with the attribute breakergen.family;
// see [WithPerKey] for each key.
func Register(reg *runtime.Registry, m metric.Meter, opts ...Option) (metric.Registration, error) {
	if reg == nil {
		return nil, errors.New("otel: Register: nil *runtime.Registry")
	}
	if m == nil {
		return nil, errors.New("otel: Register: nil metric.Meter")
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return register(m, reg, reg.ChainAnswers, o)
}

// register is Register reading the chains' answers from answers.
func register(m metric.Meter, reg *runtime.Registry, answers func() []runtime.ChainAnswer, opt options) (metric.Registration, error) {
	var in instruments
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	in.state, err = m.Int64ObservableGauge("breakergen.breaker.state",
		metric.WithDescription("The breaker's state: 1 for the current state (circuitbreaker.state closed, half_open, open, or an operator's isolated or bypassed), 0 for the others."))
	add(err)
	in.calls, err = m.Int64ObservableCounter("breakergen.breaker.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls by breakergen.outcome since the breaker was created or reset: success only with call counting (runtime.WithCallCounts); ignored is the caller's cancel."))
	add(err)
	in.transitions, err = m.Int64ObservableCounter("breakergen.breaker.transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("State transitions by breakergen.from_state and breakergen.to_state since the breaker was created or reset."))
	add(err)
	in.consecutive, err = m.Int64ObservableGauge("breakergen.breaker.consecutive_failures", metric.WithUnit("{failure}"),
		metric.WithDescription("Consecutive failures towards the breaker's threshold (0 unless CLOSED)."))
	add(err)
	in.failureRate, err = m.Float64ObservableGauge("breakergen.breaker.failure_rate", metric.WithUnit("1"),
		metric.WithDescription("Failures over calls in the breaker's window, 0..1 (breakers with a window only)."))
	add(err)
	in.inFlight, err = m.Int64ObservableUpDownCounter("breakergen.breaker.in_flight", metric.WithUnit("{call}"),
		metric.WithDescription("Calls in flight (breakers with a concurrency limit or an inflight bound only)."))
	add(err)
	in.chainAnswers, err = m.Int64ObservableCounter("breakergen.chain.answers", metric.WithUnit("{answer}"),
		metric.WithDescription("Answers of generated chains by breakergen.chain.source (breaker name, a family's name for its keys, or stale) and breakergen.chain.kind (live, fallback, stale, hedged, none)."))
	add(err)
	in.famCalls, err = m.Int64ObservableCounter("breakergen.family.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls by breakergen.outcome summed over the family's keys, dropped keys included: success only with call counting (runtime.WithCallCounts)."))
	add(err)
	in.famTransitions, err = m.Int64ObservableCounter("breakergen.family.transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("State transitions by breakergen.from_state and breakergen.to_state summed over the family's keys, dropped keys included."))
	add(err)
	in.famKeys, err = m.Int64ObservableUpDownCounter("breakergen.family.keys", metric.WithUnit("{breaker}"),
		metric.WithDescription("Live per-key breakers of the family."))
	add(err)
	in.famOpenKeys, err = m.Int64ObservableUpDownCounter("breakergen.family.open_keys", metric.WithUnit("{breaker}"),
		metric.WithDescription("Live per-key breakers of the family in the OPEN state."))
	add(err)
	in.famKeyLimit, err = m.Int64ObservableGauge("breakergen.family.key_limit", metric.WithUnit("{breaker}"),
		metric.WithDescription("How many per-key breakers the family keeps live at once (keys=N)."))
	add(err)
	in.famDropped, err = m.Int64ObservableCounter("breakergen.family.dropped_keys", metric.WithUnit("{breaker}"),
		metric.WithDescription("Per-key breakers dropped to keep the family within its bound."))
	add(err)
	in.famKeptClosed, err = m.Int64ObservableCounter("breakergen.family.kept_closed", metric.WithUnit("{trip}"),
		metric.WithDescription("Trips of the family's keys that maxopen kept CLOSED."))
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("otel: Register: %w", err)
	}

	var series failseries.Series // keeps outcome=failure from going back
	r, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		bs := reg.PlainBreakers() // a family's keys are in its totals
		if opt.perKey {
			bs = reg.Breakers()
		}
		fams := reg.Families()
		n := series.Read(bs, fams)

		// Names as attribute values: valid UTF-8, each once (see
		// package internal/labelvalue).
		names := make([][]string, len(bs))
		for i := range bs {
			names[i] = []string{n.Stats[i].Name}
		}
		for i, ok := range labelvalue.Clean(names) {
			if ok {
				in.observe(o, names[i][0], n.Stats[i], bs[i].Config(), n.Failures[i])
			}
		}

		names = make([][]string, len(fams))
		for i := range fams {
			names[i] = []string{n.Totals[i].Name}
		}
		for i, ok := range labelvalue.Clean(names) {
			if ok {
				in.observeFamily(o, names[i][0], fams[i], n.Totals[i], n.FamilyFailures[i])
			}
		}

		as := answers()
		names = make([][]string, len(as))
		for i, a := range as {
			names[i] = []string{a.Source, a.Kind}
		}
		for i, ok := range labelvalue.Clean(names) {
			if ok {
				o.ObserveInt64(in.chainAnswers, int64(as[i].Count),
					metric.WithAttributes(sourceKey.String(names[i][0]), kindKey.String(names[i][1])))
			}
		}
		return nil
	}, in.state, in.calls, in.transitions, in.consecutive, in.failureRate, in.inFlight, in.chainAnswers,
		in.famCalls, in.famTransitions, in.famKeys, in.famOpenKeys, in.famKeyLimit, in.famDropped, in.famKeptClosed)
	if err != nil {
		return nil, fmt.Errorf("otel: Register: %w", err)
	}
	return r, nil
}

// observe records one breaker's measurements, with the
// circuitbreaker.name name (its name cleaned by labelvalue.Clean);
// failures is its outcome=failure (see package internal/failseries). A
// measurement the runtime does not count is left out, as in the
// Prometheus exporter.
func (in *instruments) observe(o metric.Observer, name string, st runtime.Stats, cfg runtime.Config, failures uint64) {
	who := nameKey.String(name)
	for _, s := range states {
		if s != st.State && (s == runtime.Isolated || s == runtime.Bypassed) {
			continue // an operator's mode shows only while the breaker is in it
		}
		var v int64
		if s == st.State {
			v = 1
		}
		o.ObserveInt64(in.state, v, metric.WithAttributes(who, stateKey.String(stateValue(s))))
	}

	observeCounts(o, in.calls, in.transitions, who, cfg, counts{
		counted: st.Counted, successes: st.Successes, failures: failures, canceled: st.Canceled,
		rejections: st.Rejections, rateLimited: st.RateLimited, throttled: st.Throttled,
		bulkheadFull: st.BulkheadFull, injected: st.Injected, transitions: &st.Transitions,
	})

	o.ObserveInt64(in.consecutive, int64(st.ConsecutiveFailures), metric.WithAttributes(who))
	if st.Window != "" || cfg.WindowCalls > 0 || cfg.WindowPeriod > 0 {
		o.ObserveFloat64(in.failureRate, st.FailureRate, metric.WithAttributes(who))
	}
	if cfg.Concurrency > 0 || cfg.InFlight > 0 {
		o.ObserveInt64(in.inFlight, int64(st.InFlight), metric.WithAttributes(who))
	}
}

// observeFamily records a family's totals t and the gauges of its keys,
// with the breakergen.family name (its name cleaned by
// labelvalue.Clean); failures is its outcome=failure (see package
// internal/failseries).
func (in *instruments) observeFamily(o metric.Observer, name string, f *runtime.Family, t runtime.FamilyTotals, failures uint64) {
	h, cfg := f.Health(), f.Config()
	fam := familyKey.String(name)
	observeCounts(o, in.famCalls, in.famTransitions, fam, cfg, counts{
		counted: t.Counted, successes: t.Successes, failures: failures, canceled: t.Canceled,
		rejections: t.Rejections, rateLimited: t.RateLimited, throttled: t.Throttled,
		bulkheadFull: t.BulkheadFull, injected: t.Injected, transitions: &t.Transitions,
	})
	o.ObserveInt64(in.famKeys, int64(t.Keys), metric.WithAttributes(fam))
	o.ObserveInt64(in.famOpenKeys, int64(t.ByState[runtime.Open]), metric.WithAttributes(fam))
	o.ObserveInt64(in.famKeyLimit, int64(h.Limit), metric.WithAttributes(fam))
	o.ObserveInt64(in.famDropped, int64(h.Dropped), metric.WithAttributes(fam))
	o.ObserveInt64(in.famKeptClosed, int64(h.KeptShut), metric.WithAttributes(fam))
}

// counts are what the calls and transitions series read: a breaker's
// [runtime.Stats] or a family's [runtime.FamilyTotals], but failures,
// which is the failure outcome (injected faults left out, see
// package internal/failseries).
type counts struct {
	counted                                        bool
	successes, failures, canceled, rejections      uint64
	rateLimited, throttled, bulkheadFull, injected uint64
	transitions                                    *[5][5]uint64
}

// observeCounts records c as the calls (by outcome) and transitions (by
// state pair) of who, leaving out the series the runtime does not count.
func observeCounts(o metric.Observer, calls, transitions metric.Int64Observable, who attribute.KeyValue, cfg runtime.Config, c counts) {
	call := func(outcome string, n uint64) {
		o.ObserveInt64(calls, int64(n), metric.WithAttributes(who, outcomeKey.String(outcome)))
	}
	if c.counted {
		call("success", c.successes)
	}
	call("failure", c.failures) // outcomes are disjoint: an injected fault is "injected"
	call("ignored", c.canceled)
	call("rejected", c.rejections)
	call("rate_limited", c.rateLimited)
	if cfg.Throttle > 0 || c.throttled > 0 {
		call("throttled", c.throttled)
	}
	if cfg.Concurrency > 0 || c.bulkheadFull > 0 {
		call("bulkhead_full", c.bulkheadFull)
	}
	if cfg.Fault > 0 || c.injected > 0 {
		call("injected", c.injected)
	}
	for _, from := range states {
		for _, to := range states {
			n := c.transitions[from][to]
			if from == to || n == 0 && !own[[2]runtime.State{from, to}] {
				continue
			}
			o.ObserveInt64(transitions, int64(n), metric.WithAttributes(who,
				fromKey.String(stateValue(from)), toKey.String(stateValue(to))))
		}
	}
}
