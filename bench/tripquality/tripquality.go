// Package tripquality measures how well circuit breakers tell a real outage
// from background noise (issue 14, point 5): breakergen beside gobreaker v2
// and failsafe-go, on one seeded call stream.
//
// Every contender sees the same calls: call i fails when the i-th draw of a
// math/rand/v2 PCG (seeded) is below the failure rate of the moment. Calls
// are synchronous and arrive at [CallsPerSecond] on a fake clock. None of
// the peers has a clock seam (gobreaker v2 reads time.Now, failsafe-go
// its wall clock), so [Measure] must run inside a testing/synctest bubble,
// whose fake clock every contender reads alike; it advances the clock by
// [Step] every [Step]·[CallsPerSecond] calls, so time is exact to 7 ms.
//
// Every contender opens for the same [Reset], admits one probe in
// HALF_OPEN and closes on one probe success; an OPEN breaker refuses the
// calls that arrive meanwhile, and those are counted.
package tripquality

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/breakergen/breakergen/runtime"
)

// The call stream and the settings every contender shares.
const (
	CallsPerSecond = 1000
	// Step divides none of the durations below, so that no deadline of a
	// breaker falls on a tick of the clock, where breakers that compare
	// with > and with >= would differ by a whole step.
	Step         = 7 * time.Millisecond
	Reset        = 30 * time.Second
	Threshold    = 5           // consecutive failures
	WindowCalls  = 100         // count windows
	WindowPeriod = time.Minute // time windows
	FailureRate  = 0.5
	MinimumCalls = 20
)

// Breaker is one contender's breaker as the harness drives it.
type Breaker interface {
	// Call makes one call whose upstream fails when fail is true; it
	// reports whether the breaker admitted it.
	Call(fail bool) (admitted bool)
	// Open reports whether the breaker is OPEN now.
	Open() bool
	// Closed reports whether the breaker is CLOSED now.
	Closed() bool
}

// Contender is one breaker configuration.
type Contender struct {
	Name string
	What string // its configuration, for the table's legend
	New  func() Breaker
}

// Contenders are the rows of the tables, in order.
var Contenders = []Contender{
	{"gobreaker-consecutive", fmt.Sprintf("sony/gobreaker/v2, `ReadyToTrip` on %d consecutive failures", Threshold), newGobreakerConsecutive},
	{"gobreaker-window", fmt.Sprintf("sony/gobreaker/v2 rolling window: `Interval` %s of `BucketPeriod` %s, `ReadyToTrip` at >= %d requests and failures/requests >= %.0f%%", WindowPeriod, WindowPeriod/10, MinimumCalls, FailureRate*100), newGobreakerWindow},
	{"failsafe-rate", fmt.Sprintf("failsafe-go `WithFailureRateThreshold(%g, %d, %s)`: %.0f%% of at least %d executions in %s", FailureRate, MinimumCalls, WindowPeriod, FailureRate*100, MinimumCalls, WindowPeriod), newFailsafeRate},
	{"failsafe-ratio", fmt.Sprintf("failsafe-go `WithFailureThresholdRatio(%d, %d)`: %d failures among the last %d executions", int(FailureRate*WindowCalls), WindowCalls, int(FailureRate*WindowCalls), WindowCalls), newFailsafeRatio},
	{"breakergen-consecutive", fmt.Sprintf("breakergen `threshold=%d`", Threshold), newBreakergen(runtime.Config{FailureThreshold: Threshold})},
	{"breakergen-window", fmt.Sprintf("breakergen `window=%d failrate=%.0f%% minimum=%d`", WindowCalls, FailureRate*100, MinimumCalls),
		newBreakergen(runtime.Config{WindowCalls: WindowCalls, FailureRate: FailureRate, MinimumCalls: MinimumCalls})},
	{"breakergen-window-1m", fmt.Sprintf("breakergen `window=1m failrate=%.0f%% minimum=%d`", FailureRate*100, MinimumCalls),
		newBreakergen(runtime.Config{WindowPeriod: WindowPeriod, FailureRate: FailureRate, MinimumCalls: MinimumCalls})},
}

var errUpstream = errors.New("upstream failed")

type gobreakerBreaker struct {
	cb *gobreaker.CircuitBreaker[struct{}]
}

func newGobreaker(st gobreaker.Settings) Breaker {
	st.MaxRequests, st.Timeout = 1, Reset
	return gobreakerBreaker{gobreaker.NewCircuitBreaker[struct{}](st)}
}

func newGobreakerConsecutive() Breaker {
	return newGobreaker(gobreaker.Settings{
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= Threshold },
	})
}

func newGobreakerWindow() Breaker {
	return newGobreaker(gobreaker.Settings{
		Interval:     WindowPeriod,
		BucketPeriod: WindowPeriod / 10,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.Requests >= MinimumCalls && float64(c.TotalFailures) >= FailureRate*float64(c.Requests)
		},
	})
}

func (g gobreakerBreaker) Call(fail bool) bool {
	_, err := g.cb.Execute(func() (struct{}, error) {
		if fail {
			return struct{}{}, errUpstream
		}
		return struct{}{}, nil
	})
	return !errors.Is(err, gobreaker.ErrOpenState) && !errors.Is(err, gobreaker.ErrTooManyRequests)
}

func (g gobreakerBreaker) Open() bool   { return g.cb.State() == gobreaker.StateOpen }
func (g gobreakerBreaker) Closed() bool { return g.cb.State() == gobreaker.StateClosed }

type failsafeBreaker struct {
	cb circuitbreaker.CircuitBreaker[any]
}

func newFailsafeRate() Breaker {
	return failsafeBreaker{circuitbreaker.NewBuilder[any]().
		WithFailureRateThreshold(FailureRate, MinimumCalls, WindowPeriod).
		WithSuccessThreshold(1).WithDelay(Reset).Build()}
}

func newFailsafeRatio() Breaker {
	return failsafeBreaker{circuitbreaker.NewBuilder[any]().
		WithFailureThresholdRatio(uint(FailureRate*WindowCalls), WindowCalls).
		WithSuccessThreshold(1).WithDelay(Reset).Build()}
}

func (f failsafeBreaker) Call(fail bool) bool {
	if !f.cb.TryAcquirePermit() {
		return false
	}
	if fail {
		f.cb.RecordFailure()
	} else {
		f.cb.RecordSuccess()
	}
	return true
}

func (f failsafeBreaker) Open() bool   { return f.cb.IsOpen() }
func (f failsafeBreaker) Closed() bool { return f.cb.IsClosed() }

type breakergenBreaker struct{ b *runtime.Breaker }

// newBreakergen makes a breaker of cfg (with the shared reset, one probe,
// one success) through runtime.Registry.Breaker, called with Do.
func newBreakergen(cfg runtime.Config) func() Breaker {
	return func() Breaker {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		cfg.Name, cfg.ResetTimeout, cfg.HalfOpenMax, cfg.SuccessThreshold = "upstream", Reset, 1, 1
		return breakergenBreaker{reg.Breaker(cfg)}
	}
}

func (g breakergenBreaker) Call(fail bool) bool {
	err := g.b.Do(context.Background(), func(context.Context) error {
		if fail {
			return errUpstream
		}
		return nil
	})
	return !errors.Is(err, runtime.ErrOpen)
}

func (g breakergenBreaker) Open() bool   { return g.b.State() == runtime.Open }
func (g breakergenBreaker) Closed() bool { return g.b.State() == runtime.Closed }

// Params say how much to measure.
type Params struct {
	Seed uint64
	// Calls is the length of each background run.
	Calls int
	// Background are the failure rates of the background runs.
	Background []float64
	// Outages are the failure rates of the outage runs; each run makes
	// Warmup calls at OutageBackground first, then fails at the outage's
	// rate until the breaker trips or Cap calls have been made.
	Outages          []float64
	OutageBackground float64
	Warmup, Cap      int
	// Runs is how many outage runs (seeds Seed, Seed+1, ...) each cell
	// takes the median of.
	Runs int
}

// Full are the parameters of the table in BENCHMARKS.md: a million calls
// per background rate, outages after 65 seconds of 1% background (so the
// one-minute windows are full), eleven runs each.
var Full = Params{
	Seed: 1, Calls: 1_000_000, Background: []float64{0.01, 0.05, 0.10, 0.20},
	Outages: []float64{0.5, 1}, OutageBackground: 0.01, Warmup: 65_000, Cap: 300_000, Runs: 11,
}

// Row is one contender's results.
type Row struct {
	Contender Contender
	// Trips and Refused per background rate, counted over Params.Calls
	// calls: CLOSED -> OPEN transitions, and calls the breaker refused.
	Trips, Refused []int
	// ToTrip per outage rate: the calls of each run from the outage's
	// start to the trip (the tripping call included); -1 for a run that
	// did not trip within Params.Cap calls.
	ToTrip [][]int
}

// Table is the result of [Measure].
type Table struct {
	Params Params
	Rows   []Row
}

// Measure runs every contender on the stream of p. It must run inside a
// testing/synctest bubble (see the package doc).
func Measure(p Params, contenders []Contender) Table {
	t := Table{Params: p}
	for _, c := range contenders {
		r := Row{Contender: c}
		for _, rate := range p.Background {
			trips, refused := background(c.New(), p.Seed, p.Calls, rate)
			r.Trips, r.Refused = append(r.Trips, trips), append(r.Refused, refused)
		}
		for _, rate := range p.Outages {
			var runs []int
			for i := range p.Runs {
				runs = append(runs, outage(c.New(), p, p.Seed+uint64(i), rate))
			}
			r.ToTrip = append(r.ToTrip, runs)
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// stream is the seeded call stream and the fake clock's pace.
type stream struct {
	rng   *rand.Rand
	calls int
}

func newStream(seed uint64) *stream {
	return &stream{rng: rand.New(rand.NewPCG(seed, 0x74726970))} // "trip"
}

// next reports whether the next call fails at rate, moving the clock on
// every Step's worth of calls.
func (s *stream) next(rate float64) bool {
	const perStep = int(CallsPerSecond * Step / time.Second)
	if s.calls%perStep == 0 && s.calls > 0 {
		time.Sleep(Step)
	}
	s.calls++
	return s.rng.Float64() < rate
}

// call makes one call and reports whether it was admitted and whether it
// tripped the breaker (CLOSED before, OPEN after).
func call(b Breaker, fail bool) (admitted, tripped bool) {
	closed := b.Closed()
	admitted = b.Call(fail)
	return admitted, closed && b.Open()
}

func background(b Breaker, seed uint64, calls int, rate float64) (trips, refused int) {
	s := newStream(seed)
	for range calls {
		admitted, tripped := call(b, s.next(rate))
		if !admitted {
			refused++
		}
		if tripped {
			trips++
		}
	}
	return trips, refused
}

func outage(b Breaker, p Params, seed uint64, rate float64) int {
	s := newStream(seed)
	for range p.Warmup {
		call(b, s.next(p.OutageBackground))
	}
	for i := 1; i <= p.Cap; i++ {
		if _, tripped := call(b, s.next(rate)); tripped {
			return i
		}
	}
	return -1
}

// Markdown renders the tables with their legend, for BENCHMARKS.md.
func (t Table) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	pc := func(f float64) string { return fmt.Sprintf("%g%%", f*100) }
	per := 1e6 / float64(t.Params.Calls)
	p("One seeded call stream (math/rand/v2 PCG, seed %d) of synchronous calls at %d a second on the fake clock of a `testing/synctest` bubble, ", t.Params.Seed, CallsPerSecond)
	p("which every contender reads (none of the peers has a clock seam; the clock moves %s every %d calls). ", Step, int(CallsPerSecond*Step/time.Second))
	p("Every breaker opens for %s, admits one probe and closes on its success; an OPEN breaker refuses the calls that arrive meanwhile. Contenders:\n\n", Reset)
	for _, r := range t.Rows {
		p("- **%s**: %s\n", r.Contender.Name, r.Contender.What)
	}
	p("\nBackground failures: trips (CLOSED → OPEN) per million calls, and in parentheses the calls refused per million, over %d calls at each rate.\n\n", t.Params.Calls)
	p("| contender |")
	for _, rate := range t.Params.Background {
		p(" %s |", pc(rate))
	}
	p("\n| --- |%s\n", strings.Repeat(" ---: |", len(t.Params.Background)))
	for _, r := range t.Rows {
		p("| %s |", r.Contender.Name)
		for i := range t.Params.Background {
			p(" %s (%s) |", perMillion(r.Trips[i], per), perMillion(r.Refused[i], per))
		}
		p("\n")
	}
	p("\nOutages: after %d calls at %s background failures, the upstream fails at the outage's rate; calls from the outage's start until the breaker trips, the tripping call included: the median of %d runs (seeds %d to %d), then the smallest and the largest; \"none\" for a run without a trip in %d calls.\n\n",
		t.Params.Warmup, pc(t.Params.OutageBackground), t.Params.Runs, t.Params.Seed, t.Params.Seed+uint64(t.Params.Runs)-1, t.Params.Cap)
	p("| contender |")
	for _, rate := range t.Params.Outages {
		p(" %s outage |", pc(rate))
	}
	p("\n| --- |%s\n", strings.Repeat(" ---: |", len(t.Params.Outages)))
	for _, r := range t.Rows {
		p("| %s |", r.Contender.Name)
		for _, runs := range r.ToTrip {
			p(" %s |", spread(runs))
		}
		p("\n")
	}
	return b.String()
}

func perMillion(n int, per float64) string {
	if per == 1 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.0f", float64(n)*per)
}

// spread is "median (min–max)" of runs, a run of -1 counting as the
// largest; a single run is just its value.
func spread(runs []int) string {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case a < 0:
			return 1
		case b < 0:
			return -1
		}
		return a - b
	})
	v := func(n int) string {
		if n < 0 {
			return "none"
		}
		return fmt.Sprint(n)
	}
	if len(s) == 1 {
		return v(s[0])
	}
	return fmt.Sprintf("%s (%s–%s)", v(s[len(s)/2]), v(s[0]), v(s[len(s)-1]))
}
