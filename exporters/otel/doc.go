// Package otel exports the breakers of a breakergen [runtime.Registry] as
// OpenTelemetry metrics: [Register] creates observable instruments on a
// [metric.Meter] whose callback reads the registry each time the meter's
// reader collects, so the calls pay nothing for it and breakers created
// later are included. It is its own module, so that the runtime keeps
// depending on the standard library alone.
//
// # Instruments
//
//	breakergen.breaker.state                 Int64ObservableGauge          circuitbreaker.name, circuitbreaker.state: 1 for the current state, 0 for the two others
//	breakergen.breaker.calls                 Int64ObservableCounter        circuitbreaker.name, breakergen.outcome
//	breakergen.breaker.transitions           Int64ObservableCounter        circuitbreaker.name, breakergen.from_state, breakergen.to_state
//	breakergen.breaker.consecutive_failures  Int64ObservableGauge          circuitbreaker.name
//	breakergen.breaker.failure_rate          Float64ObservableGauge        circuitbreaker.name (breakers with a window)
//	breakergen.breaker.in_flight             Int64ObservableUpDownCounter  circuitbreaker.name (breakers with a concurrency limit or an inflight bound)
//	breakergen.chain.answers                 Int64ObservableCounter        breakergen.chain.source, breakergen.chain.kind
//
// A family of per-key breakers ([runtime.Family]) is observed as one, with
// the attribute breakergen.family, its keys left out of the instruments
// above: breakergen.family.calls and breakergen.family.transitions
// (counters summed over its keys, dropped keys included, so they never go
// down), breakergen.family.keys and breakergen.family.open_keys (up-down
// counters of its live and its OPEN keys), breakergen.family.key_limit,
// breakergen.family.dropped_keys and breakergen.family.kept_closed.
// [WithPerKey] adds each live key as a breaker, circuitbreaker.name
// "<family>/<key>".
//
// Names are observed as valid UTF-8, each run of invalid bytes replaced
// by U+FFFD, as in the Prometheus exporter: a key comes from a request
// and may hold any bytes, and an OTLP exporter cannot marshal a string
// that is not UTF-8 and drops the whole batch. Of names that become one
// value that way, one is observed: the one that needed no cleaning, else
// the first in name order.
//
// circuitbreaker.name and circuitbreaker.state are the attributes of
// OpenTelemetry's circuit-breaker semantic convention proposal; states are
// closed, half_open and open, each observed (1 for the current one, 0 for
// the two others), and an operator's isolated and bypassed, observed only
// while the breaker is in that mode, as in the Prometheus exporter. Outcomes are
// success, failure, ignored (the caller's own cancel), rejected,
// rate_limited, throttled, bulkhead_full and injected (a fault injected by
// the settings, runtime.ErrInjected: not in failure), disjoint. Chain kinds are
// live, fallback, stale, hedged and none. in_flight is an up-down counter,
// as OpenTelemetry's conventions make counts of active requests.
//
// The counters are the runtime's totals since each breaker was created, so
// a registration made late still sees earlier calls (cumulative
// temporality reads them as they are; [runtime.Breaker.Reset] is a reset
// of the count). outcome=failure leaves out injected faults
// ([runtime.Stats].Failures − Injected, two counters a collection cannot
// read at one instant): it is the most that difference has been since the
// breaker was created or reset, so it never goes back between resets and
// never below 0. A measurement the runtime does not count is left out,
// not observed as 0: success needs call counting
// ([runtime.WithCallCounts], off by default because it costs the success
// path a shared write per call; rejected is always there), failure_rate a window, in_flight a
// concurrency limit or an inflight bound, throttled a throttle,
// bulkhead_full a concurrency limit and injected fault injection.
package otel
