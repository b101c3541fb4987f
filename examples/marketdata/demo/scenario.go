package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/examples/marketdata/fakeupstream"
	"github.com/breakergen/breakergen/runtime"
)

// shortened are the breakers whose reset the demo shortens: every
// other setting stays as annotated (sources.go).
var shortened = []string{marketdata.Eastmoney, marketdata.Tencent, marketdata.TDX, marketdata.Push2ex,
	"fallback:" + marketdata.Sina} // a fallback's breaker is named "fallback:" and its Name

// registry returns the demo's registry: the annotated settings, with the
// reset shortened by run-time overrides, as an operator would
// (runtime.WithConfig; zero fields keep the annotation's values).
func registry(reset time.Duration, opts ...runtime.Option) *runtime.Registry {
	// The throttle's draws are seeded, so that every run tells the same
	// story.
	opts = append(opts, runtime.WithRand(rand.New(rand.NewPCG(2026, 11))))
	for _, name := range shortened {
		opts = append(opts, runtime.WithConfig(runtime.Config{Name: name, ResetTimeout: reset}))
	}
	return runtime.NewRegistry(opts...)
}

// Scenario is one run of the demo: a fake upstream, a registry with a short
// reset, the generated wrappers around a real HTTP client, and a log
// of what happens. Set the exported fields, then call [Scenario.Run] once.
type Scenario struct {
	// Up is the fake upstream.
	Up *fakeupstream.Server
	// Client talks to Up; the scenario sets its BanCooldown to Reset.
	Client *marketdata.Client
	// Reset is how long every breaker stays OPEN (the reset key),
	// registered before the wrappers are built. Default 2s.
	Reset time.Duration
	// Logger receives the runtime's own slog output. Default: discarded.
	Logger *slog.Logger
	// Options are added to those of the scenario's registry (a
	// runtime.WithRecorder, say).
	Options []runtime.Option

	log         *liveLog
	start       time.Time
	reg         *runtime.Registry
	stocks      marketdata.StockSource
	flows       *marketdata.FundFlowSourceChain
	svc         *marketdata.Service
	transitions chan runtime.Event // wakes waitState and settle
	scenes      int                // scenes started
}

// Report is what a run established, for the test.
type Report struct {
	// TripCalls is how many failing calls it took to open tdx.
	TripCalls int
	// TDXOpened reports whether tdx went CLOSED → OPEN in the outage.
	TDXOpened bool
	// Rejected is how many calls tdx refused while OPEN.
	Rejected int
	// UpstreamWhileOpen is how many requests reached tdx meanwhile.
	UpstreamWhileOpen int64
	// ProbeFailed and ProbeRecovered: the first probe re-opened tdx, the
	// second closed it.
	ProbeFailed, ProbeRecovered bool
	// LimiterCalls is how many eastmoney searches the limiter scene made.
	LimiterCalls int
	// LimiterElapsed is how long they took, from the first call's start
	// to the last call's end.
	LimiterElapsed time.Duration
	// LimiterRate is the sustained rate after the burst, in requests per
	// second: (LimiterCalls - burst) / LimiterElapsed.
	LimiterRate float64
	// LimiterUpstream is how many of them reached eastmoney.
	LimiterUpstream int64
	// Ban and Throttle are the errors of the 403 and of the 429.
	Ban, Throttle error
	// SlowErr is the error of the call that gave up on a slow upstream.
	SlowErr error
	// Flows are the provenance of each fund-flow answer through the chain,
	// or "error: " and the provenance of a call no source answered.
	Flows []string
	// EmptyKept reports whether the chain served an empty answer from its
	// stale cache (it must not).
	EmptyKept bool
	// HedgeElapsed is how long the hedged fund-flow call took while
	// eastmoney answered only after HedgeSlow; HedgeFlow is its provenance.
	HedgeElapsed time.Duration
	HedgeFlow    string
	// ConsecutiveTripAt is the call of the background-failure stream at
	// which a breaker counting 5 failures in a row would have opened (0:
	// never); WindowRodeOut reports whether tencent's windowed breaker was
	// still CLOSED after the stream, and WindowFigures its window then.
	ConsecutiveTripAt int
	WindowRodeOut     bool
	WindowFigures     runtime.Stats
	// OutageTripCalls is how many calls of the real outage it took the
	// window to trip; OutageReason is the trip's reason.
	OutageTripCalls int
	OutageReason    string
	// Recovered reports whether every breaker was CLOSED at the end of
	// the all-clear scene.
	Recovered bool
	// BulkheadAnswered and BulkheadFull count the concurrent tdx calls
	// that got a slot and those refused with runtime.ErrBulkheadFull;
	// BulkheadUpstream is how many reached tdx, BulkheadFullAfter the
	// longest a refused call took.
	BulkheadAnswered, BulkheadFull int
	BulkheadUpstream               int64
	BulkheadFullAfter              time.Duration
	// ThrottleCalls is how many push2ex polls the throttle scene made,
	// ThrottleUpstream how many reached push2ex, Throttled how many were
	// refused with runtime.ErrThrottled, and ThrottleOpened whether its
	// breaker opened meanwhile (it must not: it never fails twice in a
	// row).
	ThrottleCalls, Throttled int
	ThrottleUpstream         int64
	ThrottleOpened           bool
	// IsolatedErr is what a call to eastmoney got while an operator had
	// isolated it; IsolatedFlow the provenance of the chain's answer then,
	// IsolatedSkip the source passed over and why, and ResumedFlow the
	// provenance after the resume (see operator.go).
	IsolatedErr                             error
	IsolatedFlow, IsolatedSkip, ResumedFlow string
	// FaultFlows are the provenance of each fund flow of the rehearsal
	// (see rehearse.go), FaultFallbacks how many sina answered, FaultFlow
	// the first of those, FaultInjected the tries injected and
	// FaultUpstream the requests that reached eastmoney meanwhile.
	FaultFlows     []string
	FaultFallbacks int
	FaultFlow      string
	FaultInjected  uint64
	FaultUpstream  int64
}

// Run plays every scene, printing to out as it goes, and then the
// degradation timeline and the health. [Scenario.Registry] has the registry
// afterwards.
func (s *Scenario) Run(ctx context.Context, out io.Writer) (*Report, error) {
	if s.Reset <= 0 {
		s.Reset = 2 * time.Second
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	s.start = time.Now()
	s.log = &liveLog{w: out, start: s.start}
	s.transitions = make(chan runtime.Event, 256)
	s.Client.BanCooldown = s.Reset // shortened like the reset

	s.reg = registry(s.Reset, append([]runtime.Option{runtime.WithLogger(s.Logger), runtime.OnStateChange(s.onTransition)}, s.Options...)...)
	stocks := marketdata.NewStockSourceBreaker(s.Client, s.reg)
	// Fund flows: eastmoney, then sina, then the last valid answer of the
	// day, as the origin service did.
	s.flows = marketdata.NewFundFlowSourceChain(s.Client, s.reg,
		runtime.Fallback[marketdata.FundFlowSource]{Name: marketdata.Sina, Impl: s.Client.Sina()})
	s.stocks = stocks
	s.svc = marketdata.NewService(stocks, s.flows)

	rep := &Report{}
	s.header()
	for _, scene := range []func(context.Context, *Report) error{
		s.normal, s.outage, s.open, s.recovery, s.limiter, s.bulkhead, s.hedged,
		s.banAndThrottle, s.slow, s.fundFlow, s.background, s.allClear, s.throttle, s.isolation, s.faults,
	} {
		if err := scene(ctx, rep); err != nil {
			return rep, err
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
	}
	// A transition made by a timer (OPEN → HALF_OPEN) may still be on its
	// way to the live log: end only when the hook has printed them all.
	if err := s.settle(ctx); err != nil {
		return rep, err
	}
	s.timeline()
	return rep, s.health()
}

// Registry returns the run's registry.
func (s *Scenario) Registry() *runtime.Registry { return s.reg }

func (s *Scenario) header() {
	w := s.log
	w.plain("breakergen demo: market data behind generated circuit breakers\n\n")
	e := s.Client.Endpoints
	w.plain("  %-13s %s\n", "upstream", strings.TrimSuffix(e.Tencent, "/"+marketdata.Tencent)+"  (fake: eastmoney, tencent, tdx, push2ex, sina)")
	w.plain("  %-13s %s\n", "breakers", "eastmoney 5 failures · tencent 50% of its last 50 calls · tdx 5 · push2ex 2  (as annotated)")
	w.plain("  %-13s %s\n", "reset", fmt.Sprintf("%s for every breaker: how long it stays OPEN, by a run-time override (annotated: 30s)", s.Reset))
	w.plain("  %-13s %s\n", "limiter", "eastmoney 1.5 requests/s, burst 3  (as annotated)")
	w.plain("  %-13s %s\n", "fund flow", "eastmoney, then fallback sina (also asked when eastmoney is 200ms late), then the last valid answer (stale=24h)")
}

// scene prints the next scene's number and title.
func (s *Scenario) scene(title string) {
	s.scenes++
	s.log.plain("\n%d · %s\n", s.scenes, title)
}

// onTransition is the registry's state-change hook: the live log, and the
// wake-up of waitState and settle. It may run on a timer's goroutine.
func (s *Scenario) onTransition(ev runtime.Event) {
	s.log.transition(ev)
	select {
	case s.transitions <- ev:
	default: // nobody is waiting; waitState reads the state itself
	}
}

// waitState waits until breaker name is in state to, woken by the hook.
func (s *Scenario) waitState(ctx context.Context, name string, to runtime.State) error {
	b, ok := s.reg.Lookup(name)
	if !ok {
		return fmt.Errorf("no breaker %s", name)
	}
	limit := time.NewTimer(10*s.Reset + 5*time.Second)
	defer limit.Stop()
	for b.State() != to {
		select {
		case <-s.transitions:
		case <-limit.C:
			return fmt.Errorf("breaker %s did not reach %s (it is %s)", name, to, b.State())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The transition may have been made by a timer whose hook is still
	// printing it: let it finish, so that the live log keeps its order.
	return s.settle(ctx)
}

// settle waits until the live log has printed every transition the
// registry recorded. Hooks of one breaker run in its transition order, but
// two breakers' transitions may reach the hooks in another order than the
// log's, so every recorded event is looked for.
func (s *Scenario) settle(ctx context.Context) error {
	limit := time.NewTimer(10*s.Reset + 5*time.Second)
	defer limit.Stop()
	for {
		s.log.flush() // a transition whose call printed no row
		ev, waiting := s.log.unprinted(s.reg.Events(runtime.DefaultEventCapacity))
		if !waiting {
			return nil
		}
		select {
		case <-s.transitions:
		case <-limit.C:
			return fmt.Errorf("the live log never printed %s's transition to %s", ev.Source, ev.To)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// row prints a call's row once the hook has given every transition
// recorded so far, so that those the call caused are printed after it. The
// hook mostly runs before the call returns, but may run later on the
// registry's delivering goroutine when another delivery is under way.
func (s *Scenario) row(provider, what, verdict, detail string) {
	limit := time.NewTimer(10*s.Reset + 5*time.Second)
	defer limit.Stop()
	for {
		if _, waiting := s.log.unseen(s.reg.Events(runtime.DefaultEventCapacity)); !waiting {
			break
		}
		select {
		case <-s.transitions:
			continue
		case <-limit.C:
		}
		break // settle reports a hook that never came
	}
	s.log.row(provider, what, verdict, detail)
}

func (s *Scenario) breaker(name string) *runtime.Breaker {
	b, _ := s.reg.Lookup(name)
	return b
}

// call prints one call's outcome: provider, what was asked, and the result
// or the error, with the breaker's failure count while it is CLOSED.
func (s *Scenario) call(provider, what string, err error, ok string) {
	if err == nil {
		s.row(provider, what, "ok", ok)
		return
	}
	verdict, msg := describe(s.log.now(), err, attempts[provider])
	b := s.breaker(provider)
	switch st := b.Stats(); {
	case st.State != runtime.Closed || verdict != "fail":
	case st.Window != "":
		msg += fmt.Sprintf("   (window: %d of %d failed)", st.WindowFailures, st.WindowCalls)
	default:
		msg += fmt.Sprintf("   (failures %d/%d)", st.ConsecutiveFailures, st.FailureThreshold)
	}
	s.row(provider, what, verdict, msg)
}

// attempts are the annotated attempts= of the routes that retry
// (sources.go): eastmoney's stock calls. Only their failures say whether
// they were retried; tencent, tdx and push2ex (attempts=1) never retry.
var attempts = map[string]int{marketdata.Eastmoney: 2}

// describe says what happened to a call, in a word and a line; tries is
// the route's attempts (0 or 1: it never retries).
func describe(now time.Time, err error, tries int) (verdict, msg string) {
	var oe *runtime.OpenError
	var se *marketdata.StatusError
	switch {
	case errors.As(err, &oe):
		if oe.State == runtime.Isolated {
			return "refused", oe.Reason
		}
		if oe.State == runtime.Open {
			return "refused", fmt.Sprintf("circuit open, next probe in %.1fs", oe.Until.Sub(now).Seconds())
		}
		return "refused", "circuit half-open, probe already in flight"
	case errors.Is(err, runtime.ErrRateLimited):
		return "refused", "rate limited"
	case errors.Is(err, runtime.ErrBulkheadFull), errors.Is(err, runtime.ErrThrottled):
		return "refused", err.Error()
	case errors.Is(err, marketdata.ErrNotFound):
		return "absent", "404 no such stock: ErrNotFound is excluded, a success for the breaker"
	case errors.As(err, &se):
		msg := strings.TrimPrefix(se.Error(), se.Provider+": ")
		switch {
		case tries < 2:
			return "fail", msg
		case !runtime.Retryable(context.Background(), err): // as the wrappers' retries decide
			return "fail", msg + " · not retried"
		}
		return "fail", msg + fmt.Sprintf(" · retried (attempts=%d)", tries)
	case errors.Is(err, context.DeadlineExceeded):
		return "fail", "gave up: context deadline exceeded"
	}
	return "fail", runtime.Brief(err)
}

// Scene: every source answers.
func (s *Scenario) normal(ctx context.Context, rep *Report) error {
	s.scene("normal traffic")
	q, err := s.stocks.Quote(ctx, "600519")
	s.call(marketdata.Tencent, "Quote 600519", err, fmt.Sprintf("%s %.2f %+.2f%%", q.Name, q.Price, q.ChangePct))
	hits, err := s.stocks.Search(ctx, "银行")
	names := make([]string, 0, len(hits))
	for _, h := range hits {
		names = append(names, h.Name)
	}
	s.call(marketdata.Eastmoney, `Search "银行"`, err, fmt.Sprintf("%d hits: %s", len(hits), strings.Join(names, ", ")))
	bars, err := s.stocks.Kline(ctx, "300750", marketdata.PeriodDay, 5)
	last := marketdata.Bar{}
	if len(bars) > 0 {
		last = bars[len(bars)-1]
	}
	s.call(marketdata.TDX, "Kline 300750 day×5", err, fmt.Sprintf("%d bars, last close %.2f", len(bars), last.Close))
	fin, err := s.stocks.Finance(ctx, "600519")
	s.call(marketdata.TDX, "Finance 600519", err, fmt.Sprintf("%s EPS %.2f ROE %.1f%%", fin.Report, fin.EPS, fin.ROE))
	changes, err := s.stocks.Changes(ctx)
	newest := ""
	if len(changes) > 0 {
		newest = ", newest " + changes[0].Name + " " + changes[0].Info
	}
	s.call(marketdata.Push2ex, "Changes", err, fmt.Sprintf("%d events%s", len(changes), newest))
	_, err = s.stocks.Quote(ctx, "999999")
	s.call(marketdata.Tencent, "Quote 999999", err, "")
	s.flow(ctx, rep, "600519")
	return nil
}

// flow asks the fund-flow chain for code and prints where the answer came
// from (runtime.WithProvenance).
func (s *Scenario) flow(ctx context.Context, rep *Report, code string) (marketdata.FundFlow, error) {
	ctx, p := runtime.WithProvenance(ctx)
	f, err := s.flows.FundFlow(ctx, code)
	what := "FundFlow " + code
	if err != nil {
		why := strings.TrimPrefix(p.String(), "none ")
		rep.Flows = append(rep.Flows, "error: "+why)
		s.row("chain", what, "fail", "no answer "+why)
		return f, err
	}
	rep.Flows = append(rep.Flows, p.String())
	s.row("chain", what, "ok", fmt.Sprintf("%s · main net %+.2f亿", p.String(), f.MainNet/1e8))
	return f, nil
}

// Scene: tdx answers 503 until its breaker trips.
func (s *Scenario) outage(ctx context.Context, rep *Report) error {
	s.scene("outage: tdx answers 503 until its breaker opens")
	s.Up.Fail(marketdata.TDX, http.StatusServiceUnavailable)
	s.log.note("upstream tdx → %s", s.Up.Behavior(marketdata.TDX))
	b := s.breaker(marketdata.TDX)
	for b.State() == runtime.Closed && rep.TripCalls < 20 {
		_, err := s.stocks.Kline(ctx, "600519", marketdata.PeriodDay, 20)
		rep.TripCalls++
		s.call(marketdata.TDX, "Kline 600519 day×20", err, "")
	}
	rep.TDXOpened = b.State() == runtime.Open
	if !rep.TDXOpened {
		return errors.New("tdx did not open")
	}
	return nil
}

// Scene: while tdx is OPEN nothing reaches it, and the page degrades.
func (s *Scenario) open(ctx context.Context, rep *Report) error {
	s.scene("tdx is OPEN: calls are refused without reaching the upstream")
	before := s.Up.Requests(marketdata.TDX)
	var last error
	for i := range 10 {
		if i%2 == 0 {
			_, last = s.stocks.Kline(ctx, "600519", marketdata.PeriodDay, 20)
		} else {
			_, last = s.stocks.Finance(ctx, "600519")
		}
		if errors.Is(last, runtime.ErrOpen) {
			rep.Rejected++
		}
	}
	s.call(marketdata.TDX, "Kline/Finance ×10", last, "")
	ov, err := s.svc.Overview(ctx, "600519")
	var gaps []string
	for _, g := range ov.Gaps {
		how := "failed"
		if g.Skipped {
			how = "skipped (open)"
		}
		gaps = append(gaps, g.Section+" "+how)
	}
	s.call("page", "Overview 600519", err, fmt.Sprintf("quote %.2f · %s", ov.Quote.Price, strings.Join(gaps, " · ")))
	after := s.Up.Requests(marketdata.TDX)
	rep.UpstreamWhileOpen = after - before
	s.log.note("requests that reached tdx: %d before, %d after: %d while OPEN", before, after, rep.UpstreamWhileOpen)
	return nil
}

// Scene: after the reset a probe goes through; it fails while tdx is
// still down, and succeeds once it is back.
func (s *Scenario) recovery(ctx context.Context, rep *Report) error {
	s.scene("probe and recovery")
	probe := func() error {
		_, err := s.stocks.Kline(ctx, "600519", marketdata.PeriodDay, 20)
		s.call(marketdata.TDX, "Kline 600519 (probe)", err, "")
		return err
	}
	s.log.note("tdx still down; waiting out its reset (%s)…", s.Reset)
	if err := s.waitState(ctx, marketdata.TDX, runtime.HalfOpen); err != nil {
		return err
	}
	if probe() != nil {
		rep.ProbeFailed = s.breaker(marketdata.TDX).State() == runtime.Open
	}
	s.Up.Healthy(marketdata.TDX)
	s.log.note("upstream tdx → %s; waiting out the next reset…", s.Up.Behavior(marketdata.TDX))
	if err := s.waitState(ctx, marketdata.TDX, runtime.HalfOpen); err != nil {
		return err
	}
	if probe() == nil {
		rep.ProbeRecovered = s.breaker(marketdata.TDX).State() == runtime.Closed
	}
	return nil
}

// Scene: eastmoney's limiter holds a burst of calls to 1.5 per second.
func (s *Scenario) limiter(ctx context.Context, rep *Report) error {
	const n = 9
	s.scene(fmt.Sprintf("limiter: %d eastmoney searches back to back", n))
	lim := s.reg.Limiter(marketdata.Eastmoney, 1.5, 3)
	rate, burst := lim.Rate()
	before := s.Up.Requests(marketdata.Eastmoney)
	start := time.Now()
	for i := range n {
		_, err := s.stocks.Search(ctx, "gzmt")
		s.call(marketdata.Eastmoney, fmt.Sprintf("Search gzmt #%d", i+1), err, fmt.Sprintf("+%.2fs into the burst", time.Since(start).Seconds()))
		if err != nil {
			return err
		}
	}
	rep.LimiterCalls = n
	rep.LimiterElapsed = time.Since(start)
	rep.LimiterRate = float64(n-burst) / rep.LimiterElapsed.Seconds()
	rep.LimiterUpstream = s.Up.Requests(marketdata.Eastmoney) - before
	s.log.note("%d requests in %.2fs: a burst of %d, then %.2f req/s (limit %.1f/s); eastmoney counted %d",
		n, rep.LimiterElapsed.Seconds(), burst, rep.LimiterRate, rate, rep.LimiterUpstream)
	return nil
}

// BulkheadSlow is how long tdx takes to answer in the bulkhead scene, and
// BulkheadCalls how many calls arrive at once; tdx admits 4 at a time and
// a fifth waits at most 50ms (concurrency=4 maxwait=50ms in sources.go).
const (
	BulkheadSlow  = 2 * time.Second
	BulkheadCalls = 20
)

// Scene: tdx slows down while a burst of requests arrives at once. Its
// bulkhead lets 4 wait on it; the others fail fast instead of piling up.
func (s *Scenario) bulkhead(ctx context.Context, rep *Report) error {
	s.scene(fmt.Sprintf("bulkhead: %d requests at once while tdx answers after %s", BulkheadCalls, BulkheadSlow))
	s.Up.Slow(marketdata.TDX, BulkheadSlow)
	s.log.note("upstream tdx → %s; tdx admits 4 calls at once (concurrency=4), a fifth waits 50ms", s.Up.Behavior(marketdata.TDX))
	before := s.Up.Requests(marketdata.TDX)
	type result struct {
		err  error
		took time.Duration
	}
	results := make(chan result, BulkheadCalls)
	for range BulkheadCalls {
		go func() {
			start := time.Now()
			_, err := s.stocks.Finance(ctx, "600519")
			results <- result{err, time.Since(start)}
		}()
	}
	var refused, answered result
	for range BulkheadCalls {
		r := <-results
		switch {
		case r.err == nil:
			rep.BulkheadAnswered++
			answered = r
		case errors.Is(r.err, runtime.ErrBulkheadFull):
			rep.BulkheadFull++
			rep.BulkheadFullAfter = max(rep.BulkheadFullAfter, r.took)
			refused = r
		default:
			return fmt.Errorf("bulkhead scene: %w", r.err)
		}
	}
	rep.BulkheadUpstream = s.Up.Requests(marketdata.TDX) - before
	s.call(marketdata.TDX, fmt.Sprintf("Finance ×%d (%.2fs)", rep.BulkheadFull, rep.BulkheadFullAfter.Seconds()), refused.err, "")
	s.call(marketdata.TDX, fmt.Sprintf("Finance ×%d (%.2fs)", rep.BulkheadAnswered, answered.took.Seconds()), nil, "answered")
	s.log.note("%d requests reached tdx; the %d refused were neither its failures nor waiting on it",
		rep.BulkheadUpstream, rep.BulkheadFull)
	s.Up.Healthy(marketdata.TDX)
	return nil
}

// HedgeSlow is how long eastmoney takes to answer in the hedge scene; the
// fund-flow chain asks sina after 200ms (hedge=200ms in sources.go).
const HedgeSlow = 2 * time.Second

// Scene: eastmoney's fund flow slows down; the chain does not wait for it
// but asks sina too once eastmoney is 200ms late, and answers from sina.
func (s *Scenario) hedged(ctx context.Context, rep *Report) error {
	s.scene(fmt.Sprintf("hedge: eastmoney answers after %s; the chain asks sina at 200ms", HedgeSlow))
	s.Up.Slow(marketdata.Eastmoney, HedgeSlow)
	s.log.note("upstream eastmoney → %s", s.Up.Behavior(marketdata.Eastmoney))
	start := time.Now()
	_, err := s.flow(ctx, rep, "300750")
	rep.HedgeElapsed = time.Since(start)
	rep.HedgeFlow = rep.Flows[len(rep.Flows)-1]
	if err != nil {
		return fmt.Errorf("hedged fund flow: %w", err)
	}
	s.log.note("answered in %.2fs: eastmoney's request was cancelled, not counted as its failure",
		rep.HedgeElapsed.Seconds())
	s.Up.Healthy(marketdata.Eastmoney)
	return nil
}

// Scene: a 403 ban from eastmoney and a 429 with Retry-After from
// push2ex, as typed errors whose RetryAfter cools their breakers down.
func (s *Scenario) banAndThrottle(ctx context.Context, rep *Report) error {
	s.scene("ban and throttle: 403 from eastmoney, 429 with Retry-After from push2ex")
	s.Up.Ban(marketdata.Eastmoney)
	s.Up.Throttle(marketdata.Push2ex, s.Reset)
	s.log.note("upstream eastmoney → %s; push2ex → %s", s.Up.Behavior(marketdata.Eastmoney), s.Up.Behavior(marketdata.Push2ex))
	_, rep.Ban = s.stocks.Search(ctx, "gzmt")
	s.call(marketdata.Eastmoney, "Search gzmt", rep.Ban, "")
	for range 2 {
		_, err := s.stocks.Changes(ctx)
		if rep.Throttle == nil {
			rep.Throttle = err
		}
		s.call(marketdata.Push2ex, "Changes", err, "")
	}
	s.log.note("each error carries RetryAfter(), so one answer opens its breaker at once, for that")
	s.log.note("long, whatever the threshold; the second push2ex call never reached the upstream")
	return nil
}

// Scene: a slow upstream against a caller's deadline.
func (s *Scenario) slow(ctx context.Context, rep *Report) error {
	const delay, deadline = 1500 * time.Millisecond, 300 * time.Millisecond
	s.scene(fmt.Sprintf("slow upstream: tencent answers after %s, the caller waits %s", delay, deadline))
	s.Up.Slow(marketdata.Tencent, delay)
	cctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	start := time.Now()
	_, rep.SlowErr = s.stocks.Quote(cctx, "600519")
	s.call(marketdata.Tencent, fmt.Sprintf("Quote 600519 (%.2fs)", time.Since(start).Seconds()), rep.SlowErr, "")
	return nil
}

// Scene: fund flows through the generated chain while eastmoney is still
// cooling down from its ban: the backup answers, then the stale cache, and
// an empty answer is passed over and never kept.
func (s *Scenario) fundFlow(ctx context.Context, rep *Report) error {
	s.scene("fund flow: eastmoney still banned; the backup sina, then the stale cache")
	s.flow(ctx, rep, "300750")
	s.Up.Fail(marketdata.Sina, http.StatusServiceUnavailable)
	s.log.note("upstream sina → %s", s.Up.Behavior(marketdata.Sina))
	s.flow(ctx, rep, "600519")
	s.log.note("every source failed: the answer kept in scene 1, within stale=24h")
	s.Up.Set(marketdata.Sina, fakeupstream.Behavior{Empty: true})
	s.log.note("upstream sina → %s", s.Up.Behavior(marketdata.Sina))
	s.flow(ctx, rep, "000001")
	s.Up.Fail(marketdata.Sina, http.StatusServiceUnavailable)
	s.log.note("upstream sina → %s", s.Up.Behavior(marketdata.Sina))
	f, err := s.flow(ctx, rep, "000001")
	rep.EmptyKept = err == nil
	if rep.EmptyKept {
		return fmt.Errorf("the chain served an empty answer it must not keep: %+v", f)
	}
	s.log.note("nothing kept for 000001: sina's empty answer was data for no one (valid=validFlow)")
	return nil
}

// ThrottlePolls is how many times the throttle scene polls push2ex, which
// fails every other request meanwhile.
const ThrottlePolls = 40

// Scene: push2ex fails every other request. It never fails twice in a
// row, so its breaker (threshold=2) never opens, and every poll would reach
// it; adaptive throttling (throttle=1.5) refuses the excess locally.
func (s *Scenario) throttle(ctx context.Context, rep *Report) error {
	s.scene(fmt.Sprintf("adaptive throttling: push2ex fails every other request; %d polls", ThrottlePolls))
	s.Up.Set(marketdata.Push2ex, fakeupstream.Behavior{Status: http.StatusServiceUnavailable, Pattern: ".x"})
	s.log.note("upstream push2ex → %s", s.Up.Behavior(marketdata.Push2ex))
	b := s.breaker(marketdata.Push2ex)
	before := s.Up.Requests(marketdata.Push2ex)
	var throttled error
	for range ThrottlePolls {
		_, err := s.stocks.Changes(ctx)
		rep.ThrottleCalls++
		if errors.Is(err, runtime.ErrThrottled) {
			rep.Throttled++
			throttled = err
		}
		rep.ThrottleOpened = rep.ThrottleOpened || b.State() != runtime.Closed
	}
	rep.ThrottleUpstream = s.Up.Requests(marketdata.Push2ex) - before
	if throttled != nil {
		s.call(marketdata.Push2ex, fmt.Sprintf("Changes ×%d", rep.Throttled), throttled, "")
	}
	s.log.note("%d polls, %d reached push2ex, %d refused locally (refusal probability now %.0f%%); its breaker stayed %s",
		rep.ThrottleCalls, rep.ThrottleUpstream, rep.Throttled, 100*b.Stats().ThrottleProbability, b.State())
	s.Up.Healthy(marketdata.Push2ex)
	s.log.note("upstream push2ex → %s", s.Up.Behavior(marketdata.Push2ex))
	return nil
}

// backgroundPattern is tencent's answers in the background-failure scene:
// 6 failures in 60 requests (10%), five of them in a row by bad luck.
var backgroundPattern = strings.Repeat(".", 11) + "x" + strings.Repeat(".", 20) + "xxxxx" + strings.Repeat(".", 23)

// Scene: tencent fails 1 request in 10, with a run of five. A breaker that
// counts consecutive failures (threshold 5) would open on that run and
// refuse every call for its window; tencent's breaker trips on the failure
// rate of its last 50 calls and rides it out. Then a real outage, which
// the window catches once half its calls have failed.
func (s *Scenario) background(ctx context.Context, rep *Report) error {
	s.scene("background failures: tencent fails 6 requests in 60, five in a row")
	s.Up.Set(marketdata.Tencent, fakeupstream.Behavior{Status: http.StatusBadGateway, Pattern: backgroundPattern})
	s.log.note("upstream tencent → %s; breaker: failure rate of the last 50 calls >= 50%%", s.Up.Behavior(marketdata.Tencent))
	// The same outcomes through a breaker that counts failures in a row.
	consecutive := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler))).
		Breaker(runtime.Config{Name: "consecutive", FailureThreshold: 5, ResetTimeout: s.Reset})
	b := s.breaker(marketdata.Tencent)
	for i := range len(backgroundPattern) {
		_, err := s.stocks.Quote(ctx, "600519")
		_ = consecutive.Do(ctx, func(context.Context) error { return err })
		if rep.ConsecutiveTripAt == 0 && consecutive.State() == runtime.Open {
			rep.ConsecutiveTripAt = i + 1
		}
		if err != nil {
			s.call(marketdata.Tencent, fmt.Sprintf("Quote 600519 #%d", i+1), err, "")
		}
	}
	rep.WindowFigures = b.Stats()
	rep.WindowRodeOut = rep.WindowFigures.State == runtime.Closed
	w := rep.WindowFigures
	s.log.note("%d calls: tencent %s, its window %d calls, %d failed (%.0f%%, trips at %.0f%%)",
		len(backgroundPattern), w.State, w.WindowCalls, w.WindowFailures, 100*w.FailureRate, 100*w.FailureRateThreshold)
	if rep.ConsecutiveTripAt > 0 {
		s.log.note("a breaker counting 5 failures in a row would have opened at call %d and refused calls for %s",
			rep.ConsecutiveTripAt, s.Reset)
	}

	s.Up.Fail(marketdata.Tencent, http.StatusBadGateway)
	s.log.note("upstream tencent → %s: a real outage", s.Up.Behavior(marketdata.Tencent))
	for b.State() == runtime.Closed && rep.OutageTripCalls < 100 {
		_, err := s.stocks.Quote(ctx, "600519")
		rep.OutageTripCalls++
		if b.State() != runtime.Closed {
			s.call(marketdata.Tencent, fmt.Sprintf("Quote 600519 (outage #%d)", rep.OutageTripCalls), err, "")
		}
	}
	if err := s.settle(ctx); err != nil {
		return err
	}
	if evs := s.reg.Events(1); len(evs) > 0 && evs[0].Source == marketdata.Tencent {
		rep.OutageReason = evs[0].Reason
	}
	s.log.note("the window tripped after %d failing calls: %s", rep.OutageTripCalls, rep.OutageReason)
	return nil
}

// Scene: every upstream heals; open breakers probe and close.
func (s *Scenario) allClear(ctx context.Context, rep *Report) error {
	s.scene("all clear: upstreams heal, open breakers probe and close")
	for _, p := range fakeupstream.Providers {
		s.Up.Healthy(p)
	}
	s.log.note("every upstream → 200 OK")
	// One call per breaker, each waiting out its reset first.
	calls := map[string]struct {
		what string
		call func() error
	}{
		marketdata.Eastmoney: {"Search gzmt", func() error { _, err := s.stocks.Search(ctx, "gzmt"); return err }},
		marketdata.Tencent:   {"Quote 600519", func() error { _, err := s.stocks.Quote(ctx, "600519"); return err }},
		marketdata.TDX:       {"Finance 600519", func() error { _, err := s.stocks.Finance(ctx, "600519"); return err }},
		marketdata.Push2ex:   {"Changes", func() error { _, err := s.stocks.Changes(ctx); return err }},
	}
	for _, b := range s.reg.Breakers() {
		name := b.Name()
		c, ok := calls[name]
		if !ok {
			continue
		}
		if b.State() == runtime.Open {
			s.log.note("%s is OPEN; waiting out its reset…", name)
			if err := s.waitState(ctx, name, runtime.HalfOpen); err != nil {
				return err
			}
			c.what += " (probe)"
		}
		s.call(name, c.what, c.call(), "")
	}
	rep.Recovered = true
	var states []string
	for _, b := range s.reg.Breakers() {
		st := b.State()
		rep.Recovered = rep.Recovered && st == runtime.Closed
		states = append(states, b.Name()+" "+st.String())
	}
	s.log.note("%s", strings.Join(states, " · "))
	return nil
}
