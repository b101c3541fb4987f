package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// ErrInjected is matched (errors.Is) by the error of a call that failed
// because its breaker's settings inject faults ([Config].Fault,
// BREAKER_<NAME>_FAULT), or latency that the route's per-try timeout cut
// short: the upstream was not called. Such a call counts as a failure,
// like a real one, and in [Stats].Injected.
var ErrInjected = errors.New("breaker: injected fault")

// InjectedError is the error of an injected fault, or of injected
// latency that a route's per-try timeout cut short; it matches
// [ErrInjected], and the latter [context.DeadlineExceeded] too, as the
// timeout's own error would. Its [Brief], and so the reason of a
// transition it causes, says "injected".
type InjectedError struct {
	Breaker string  // the breaker's name
	Fault   float64 // the fraction of calls that fail so
	// Latency and Timeout, for injected latency (Config.Latency) longer
	// than the route's per-try timeout: the try failed at Timeout.
	Latency, Timeout time.Duration
}

func (e *InjectedError) Error() string {
	if e.Timeout > 0 {
		return fmt.Sprintf("breaker[%s]: injected latency %s cut by the try's timeout %s: %v", e.Breaker, e.Latency, e.Timeout, context.DeadlineExceeded)
	}
	return fmt.Sprintf("breaker[%s]: injected fault (fault=%s)", e.Breaker, pct(e.Fault))
}

// Is makes an InjectedError match ErrInjected, and one of a timeout
// context.DeadlineExceeded.
func (e *InjectedError) Is(target error) bool {
	return target == ErrInjected || e.Timeout > 0 && target == context.DeadlineExceeded
}

// pct writes a fraction as a percentage: 0.3 as "30%".
func pct(f float64) string {
	return strconv.FormatFloat(f*100, 'g', 4, 64) + "%"
}

// injector is what a breaker whose settings inject anything does to its
// calls; nil on every other breaker, which then pays nothing.
type injector struct {
	fault       float64
	latency     time.Duration
	latencyRate float64
	err         error // the one *InjectedError of its breaker: no allocation per call
}

func newInjector(cfg Config) *injector {
	if cfg.Fault <= 0 && cfg.Latency <= 0 {
		return nil
	}
	return &injector{
		fault: cfg.Fault, latency: cfg.Latency, latencyRate: cfg.LatencyRate,
		err: &InjectedError{Breaker: cfg.Name, Fault: cfg.Fault},
	}
}

// injectDefaults keeps Fault and LatencyRate within 0..1 (NaN is 0) and
// makes a Latency given alone apply to every call.
func (c Config) injectDefaults() Config {
	c.Fault = fraction(c.Fault)
	if c.Latency <= 0 {
		c.Latency, c.LatencyRate = 0, 0
	} else if c.LatencyRate = fraction(c.LatencyRate); c.LatencyRate == 0 {
		c.LatencyRate = 1
	}
	return c
}

func fraction(f float64) float64 {
	if !(f > 0) {
		return 0
	}
	return min(f, 1)
}

// inject runs the injection step of the call admitted as w (see
// [core.Injector]): the latency wait on the registry's clock, then the
// fault; each draw comes from the registry's source ([WithRand]), the
// latency's first, and is made only when the setting is on.
func (b *Breaker) inject(ctx context.Context, w uint64, timeout time.Duration) (uint64, error) {
	w, _, err := b.injectStaged(ctx, w, timeout)
	return w, err
}

// injectStaged is inject that also says how a call it failed is to be
// recorded: as the breaker counted it. A delay cut short by ctx is
// settled as ctx's error, so a deadline is a failure (core.Failed, class
// "failure") and the caller's cancel is neither (core.Refused, class
// "canceled"), as the breaker's classifier has it; an injected fault is
// core.Refused with its error (class "injected").
func (b *Breaker) injectStaged(ctx context.Context, w uint64, timeout time.Duration) (uint64, core.Stage, error) {
	in := b.injector
	if in.latency > 0 && b.reg.draw() < in.latencyRate {
		if ctx == nil {
			ctx = context.Background()
		}
		wait, cut := in.latency, timeout > 0 && timeout <= in.latency
		if cut {
			wait = timeout // the route's per-try timeout ends the wait first
		}
		if !core.Sleep(ctx, wait, b.reg.clock.AfterFunc) {
			err := ctx.Err()
			stage := stageOf(b.settle(ctx, w, err))
			if stage == core.Ignored {
				stage = core.Refused // the upstream was not called: the wait was cut
			}
			return 0, stage, err
		}
		if cut {
			// As the timeout would end an upstream that slow: the try
			// fails, injected (so it is retried, marked and counted as
			// an injected fault is), matching context.DeadlineExceeded.
			err := &InjectedError{Breaker: b.Name(), Latency: in.latency, Timeout: timeout}
			b.injected.Add(1)
			b.finish(w, Failure, err)
			return 0, core.Refused, err
		}
	}
	if in.fault > 0 && b.reg.draw() < in.fault {
		// Injected before the failure (finish counts it), and Stats reads
		// them the other way round: see injectStats.
		b.injected.Add(1)
		b.finish(w, Failure, in.err)
		return 0, core.Refused, in.err
	}
	return w, core.Refused, nil
}

func (o *ops) Injecting() bool { return o.injector != nil }

func (o *ops) Inject(ctx context.Context, w uint64, timeout time.Duration) (uint64, error) {
	return o.b().inject(ctx, w, timeout)
}

func (o *ops) InjectStaged(ctx context.Context, w uint64, timeout time.Duration) (uint64, core.Stage, error) {
	return o.b().injectStaged(ctx, w, timeout)
}

// injectStats adds the injection figures to st, whose Failures were read
// just before injected, the injected faults.
//
// The two counters cannot be read at one instant, so a snapshot may take
// a fault being counted in one and not yet in the other. An injected
// fault is counted in injected before Failures, and Failures is read
// first, so a snapshot's Failures − Injected (the failures that were not
// injected, which the exporters report as a counter of their own) is
// never more than the real failures counted so far: it may lag, not get
// ahead and then fall back (but for a call with injected latency that
// was counted as in flight past InFlight before its fault was drawn: a
// real failure until then). The opposite order would let it get ahead
// whenever a fault is between its counts, and a monotone exporter would
// keep that excess. Injected is bounded by Failures, so that a fault
// being counted (or one whose outcome was ignored, see endTracked) never
// shows as more injected faults than failures.
func (b *Breaker) injectStats(st *Stats, injected uint64) {
	st.Injected = min(injected, st.Failures)
	if in := b.injector; in != nil {
		st.Fault, st.LatencySeconds, st.LatencyRate = in.fault, in.latency.Seconds(), in.latencyRate
	}
}

// faultValue parses BREAKER_<NAME>_FAULT: a fraction from 0 to 1 or a
// percentage, like 0.3 or 30%.
func faultValue(s string) (float64, error) {
	s = strings.TrimSpace(s)
	num, isPct := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if isPct {
		f /= 100
	}
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		return 0, fmt.Errorf("want a fraction from 0 to 1 or a percentage, like 0.3 or 30%%")
	}
	return f, nil
}

// latencyValue parses BREAKER_<NAME>_LATENCY: D@P, a delay (a Go duration
// or seconds) and the fraction of calls it applies to, or D alone for all.
func latencyValue(s string) (time.Duration, float64, error) {
	want := fmt.Errorf("want a delay and a fraction of calls, like 200ms@0.1 or 2s@25%%, or a delay alone for every call")
	ds, ps, hasP := strings.Cut(strings.TrimSpace(s), "@")
	d, err := seconds(ds)
	if err != nil {
		return 0, 0, want
	}
	p := 1.0
	if hasP {
		if p, err = faultValue(ps); err != nil || p == 0 {
			return 0, 0, want
		}
	}
	return d, p, nil
}
