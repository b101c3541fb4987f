package runtime_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/breakergen/breakergen/runtime"
)

// model is the reference breaker: the SPEC's state machine written as
// plainly as possible, with no concurrency and no cleverness.
type model struct {
	cfg       runtime.Config
	now       time.Time
	state     runtime.State
	period    int
	fails     int // consecutive failures in CLOSED
	wins      int // consecutive probe successes in HALF_OPEN
	nextProbe time.Time
	probes    map[int]time.Time // pending probes: token index -> deadline
	reclaimed map[int]bool      // probes whose slot was reclaimed
	events    int
	failures  uint64
	ignored   uint64
}

func (m *model) move(to runtime.State, at time.Time) {
	if m.state == to {
		return
	}
	m.state = to
	m.period++
	m.fails, m.wins = 0, 0
	m.probes = map[int]time.Time{}
	m.events++
	if to == runtime.Open {
		m.nextProbe = at.Add(m.cfg.ResetTimeout)
	}
}

// advance lets time pass up to t, making every timed move in order.
func (m *model) advance(t time.Time) { m.advanceWith(t, m.move) }

// advanceWith is advance making its moves with move (a model that embeds
// this one and moves its own way passes its own).
func (m *model) advanceWith(t time.Time, move func(to runtime.State, at time.Time)) {
	for {
		switch m.state {
		case runtime.Open:
			if t.Before(m.nextProbe) {
				m.now = t
				return
			}
			move(runtime.HalfOpen, m.nextProbe)
			continue
		case runtime.HalfOpen:
			var first time.Time
			victim := -1
			for i, dl := range m.probes {
				if first.IsZero() || dl.Before(first) || dl.Equal(first) && i < victim {
					first, victim = dl, i
				}
			}
			if !first.IsZero() && !t.Before(first) {
				m.failures++
				m.reclaimed[victim] = true
				move(runtime.Open, first)
				continue
			}
		}
		m.now = t
		return
	}
}

type heldToken struct {
	tok    runtime.Token
	period int
	probe  bool
	open   bool // not yet released
}

// TestBreakerMatchesModel drives random sequences of acquire, release with
// an outcome, whole failing calls, time passing and reset against the model.
// It runs 1000 sequences by default (-rapid.checks to change).
func TestBreakerMatchesModel(t *testing.T) {
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		_ = f.Value.Set("1000")
		defer func() { _ = f.Value.Set(f.DefValue) }()
	}
	rapid.Check(t, func(rt *rapid.T) {
		cfg := runtime.Config{
			Name:             "model",
			FailureThreshold: rapid.IntRange(1, 3).Draw(rt, "threshold"),
			ResetTimeout:     time.Duration(rapid.IntRange(1, 5).Draw(rt, "reset")) * time.Second,
			HalfOpenMax:      rapid.IntRange(1, 3).Draw(rt, "halfopen"),
			SuccessThreshold: rapid.IntRange(1, 2).Draw(rt, "successes"),
		}
		clk := newFakeClock()
		reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()), runtime.WithEventCapacity(100000))
		b := reg.Breaker(cfg)
		m := &model{cfg: cfg, now: t0, period: 1, probes: map[int]time.Time{}, reclaimed: map[int]bool{}}
		var held []heldToken

		rt.Repeat(map[string]func(*rapid.T){
			"acquire": func(rt *rapid.T) {
				tok, err := b.Acquire(context.Background())
				admit := m.state == runtime.Closed || m.state == runtime.HalfOpen && len(m.probes) < cfg.HalfOpenMax
				if admit != (err == nil) {
					rt.Fatalf("model admits=%v, breaker err=%v (state %v)", admit, err, m.state)
				}
				if err != nil {
					if !errors.Is(err, runtime.ErrOpen) {
						rt.Fatalf("rejection %v does not match ErrOpen", err)
					}
					return
				}
				h := heldToken{tok: tok, period: m.period, probe: m.state == runtime.HalfOpen, open: true}
				if h.probe {
					m.probes[len(held)] = m.now.Add(cfg.ResetTimeout)
				}
				held = append(held, h)
			},
			"release": func(rt *rapid.T) {
				var pending []int
				for i, h := range held {
					if h.open {
						pending = append(pending, i)
					}
				}
				if len(pending) == 0 {
					rt.Skip("nothing held")
				}
				i := rapid.SampledFrom(pending).Draw(rt, "token")
				o := rapid.SampledFrom([]runtime.Outcome{runtime.Success, runtime.Failure, runtime.Ignored}).Draw(rt, "outcome")
				held[i].open = false
				b.Record(held[i].tok, o, errors.New("upstream"))
				if m.reclaimed[i] {
					return // counted as a failure when reclaimed
				}
				switch o {
				case runtime.Failure:
					m.failures++
				case runtime.Ignored:
					m.ignored++
				}
				h := held[i]
				if h.period != m.period {
					return // an older period: ignored
				}
				if h.probe {
					if _, ok := m.probes[i]; !ok {
						return // reclaimed
					}
					delete(m.probes, i)
					switch o {
					case runtime.Success:
						m.wins++
						if m.wins >= cfg.SuccessThreshold {
							m.move(runtime.Closed, m.now)
						}
					case runtime.Failure:
						m.move(runtime.Open, m.now)
					}
					return
				}
				switch o {
				case runtime.Success:
					m.fails = 0
				case runtime.Failure:
					m.fails++
					if m.fails == cfg.FailureThreshold {
						m.move(runtime.Open, m.now)
					}
				}
			},
			"fail": func(rt *rapid.T) { // a whole failing call: drives trips
				if err := b.Do(context.Background(), func(context.Context) error { return errors.New("down") }); errors.Is(err, runtime.ErrOpen) {
					if m.state == runtime.Closed {
						rt.Fatalf("rejected while the model is CLOSED")
					}
					return
				}
				m.failures++
				switch m.state {
				case runtime.Closed:
					m.fails++
					if m.fails == cfg.FailureThreshold {
						m.move(runtime.Open, m.now)
					}
				case runtime.HalfOpen:
					m.move(runtime.Open, m.now)
				default:
					rt.Fatalf("admitted while the model is OPEN")
				}
			},
			"advance": func(rt *rapid.T) {
				d := time.Duration(rapid.IntRange(1, 8000).Draw(rt, "ms")) * time.Millisecond
				clk.Advance(d)
				m.advance(m.now.Add(d))
			},
			"reset": func(rt *rapid.T) {
				b.Reset()
				m.state, m.fails, m.wins = runtime.Closed, 0, 0
				m.period++
				m.probes = map[int]time.Time{}
				m.failures, m.ignored = 0, 0
				m.events = 0
				held = held[:0:0] // tokens from before a reset can no longer count
				m.reclaimed = map[int]bool{}
			},
			"": func(rt *rapid.T) { // invariants after every action
				st := b.Stats()
				if st.State != m.state {
					rt.Fatalf("state %v, model %v", st.State, m.state)
				}
				if st.ProbesInFlight > cfg.HalfOpenMax {
					rt.Fatalf("%d probes in flight, quota %d", st.ProbesInFlight, cfg.HalfOpenMax)
				}
				if st.ProbesInFlight != len(m.probes) {
					rt.Fatalf("%d probes in flight, model %d", st.ProbesInFlight, len(m.probes))
				}
				if st.State == runtime.Closed && st.ConsecutiveFailures != m.fails {
					rt.Fatalf("consecutive failures %d, model %d", st.ConsecutiveFailures, m.fails)
				}
				if st.State == runtime.HalfOpen && st.ConsecutiveSuccesses != m.wins {
					rt.Fatalf("probe successes %d, model %d", st.ConsecutiveSuccesses, m.wins)
				}
				if st.Failures != m.failures || st.Ignored != m.ignored {
					rt.Fatalf("failures/ignored %d/%d, model %d/%d", st.Failures, st.Ignored, m.failures, m.ignored)
				}
				if st.State == runtime.Open && !st.NextProbe.Equal(m.nextProbe) {
					rt.Fatalf("next probe %v, model %v", st.NextProbe, m.nextProbe)
				}
				evs := reg.Events(100000)
				if len(evs) < m.events { // reset records none, but old ones stay
					rt.Fatalf("%d events, model %d transitions", len(evs), m.events)
				}
				if st.StateChanges != uint64(m.events) {
					rt.Fatalf("%d state changes, model %d", st.StateChanges, m.events)
				}
				for i, ev := range evs {
					if ev.From == ev.To || ev.Reason == "" {
						rt.Fatalf("event %d is not a real transition with a reason: %+v", i, ev)
					}
				}
				// Never stuck: after the longest window with no action, a
				// HALF_OPEN breaker has either closed or re-opened.
				if st.State == runtime.HalfOpen && len(m.probes) > 0 {
					var last time.Time
					for _, dl := range m.probes {
						if dl.After(last) {
							last = dl
						}
					}
					if last.Sub(m.now) > cfg.ResetTimeout {
						rt.Fatalf("probe deadline %v beyond the window from %v", last, m.now)
					}
				}
			},
		})
	})
}

// windowModel is the reference for trip conditions over a window: every
// ended call of the current CLOSED period kept in a list, and the rules of
// SPEC §8 in integer arithmetic.
type windowModel struct {
	cfg              runtime.Config
	failPct, slowPct int // the rates, in whole percent
	state            runtime.State
	calls            []windowCall // ended calls of the current CLOSED period
	consecutive      int
	now              time.Time
	origin           time.Time // where buckets start: the zero Time is the Unix epoch
}

type windowCall struct {
	end          time.Time
	failed, slow bool
}

// held returns the calls the window holds at the model's now: the last
// WindowCalls, or those that ended in the current bucket of D/10 or the ten
// before it.
func (m *windowModel) held() []windowCall {
	if n := m.cfg.WindowCalls; n > 0 {
		return m.calls[max(len(m.calls)-n, 0):]
	}
	width := int64(m.cfg.WindowPeriod / 10)
	since := func(t time.Time) int64 {
		if m.origin.IsZero() {
			return t.UnixNano()
		}
		return int64(t.Sub(m.origin))
	}
	now := since(m.now) / width
	var out []windowCall
	for _, c := range m.calls {
		if since(c.end)/width > now-11 {
			out = append(out, c)
		}
	}
	return out
}

func (m *windowModel) counts() (calls, failures, slow int) {
	for _, c := range m.held() {
		calls++
		if c.failed {
			failures++
		}
		if c.slow {
			slow++
		}
	}
	return calls, failures, slow
}

// end counts an ended call and returns the reason of the trip it causes,
// or "".
func (m *windowModel) end(failed, slow bool) string {
	if failed {
		m.consecutive++
	} else {
		m.consecutive = 0
	}
	m.calls = append(m.calls, windowCall{end: m.now, failed: failed, slow: slow})
	if failed && m.consecutive == m.cfg.FailureThreshold {
		return "upstream"
	}
	calls, failures, slowCalls := m.counts()
	span := fmt.Sprintf("the last %d calls", calls)
	if m.cfg.WindowPeriod > 0 {
		span = fmt.Sprintf("%d calls in %s", calls, m.cfg.WindowPeriod)
	}
	switch {
	case calls < m.cfg.MinimumCalls:
		return ""
	case failures*100 >= m.failPct*calls:
		return fmt.Sprintf("failure rate %s (%d of %s) >= %d%%", pct(failures, calls), failures, span, m.failPct)
	case m.cfg.SlowCall > 0 && slowCalls*100 >= m.slowPct*calls:
		return fmt.Sprintf("slow calls %s (%d of %d over %s) >= %d%%", pct(slowCalls, calls), slowCalls, calls, m.cfg.SlowCall, m.slowPct)
	}
	return ""
}

func pct(n, of int) string {
	s := strconv.FormatFloat(float64(n)*100/float64(of), 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + "%"
}

// TestWindowMatchesModel drives random seeded streams of calls (successes,
// failures, ignored calls, slow or not) and time passing through breakers
// with random windows, against windowModel: the breaker trips exactly when
// the model does (so never below the minimum), with the model's reason,
// and its window figures and rates are the model's at every step.
func TestWindowMatchesModel(t *testing.T) {
	checkWindowModel(t, false)
}

// TestTimeWindowLockFreeMatchesModel is TestWindowMatchesModel on the real
// clock in a synctest bubble, where a time window counts its successes
// without a lock (released with Release, as generated code does): the
// same figures and the same trips at every step, whichever path counted.
func TestTimeWindowLockFreeMatchesModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { checkWindowModel(t, true) })
}

// bubbleTB hides a bubble's *testing.T from rapid, which would ask it for
// its deadline (not allowed in a bubble); rapid's own bound then runs on
// the bubble's clock.
type bubbleTB struct{ testing.TB }

// checkWindowModel is TestWindowMatchesModel, on a stepped test clock or,
// with real, on the real clock (inside a synctest bubble).
func checkWindowModel(t *testing.T, real bool) {
	checks, tb := "1000", rapid.TB(t)
	if real {
		checks, tb = "200", bubbleTB{t} // each check sleeps minutes of the bubble's time
	}
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		_ = f.Value.Set(checks)
		defer func() { _ = f.Value.Set(f.DefValue) }()
	}
	rapid.Check(tb, func(rt *rapid.T) {
		m := &windowModel{now: t0}
		if real {
			m.now = time.Now()
		}
		m.failPct = rapid.IntRange(1, 100).Draw(rt, "failrate")
		cfg := runtime.Config{
			Name:         "w",
			ResetTimeout: time.Second,
			FailureRate:  float64(m.failPct) / 100,
		}
		if rapid.Bool().Draw(rt, "count") {
			cfg.WindowCalls = rapid.IntRange(10, 30).Draw(rt, "calls")
			cfg.MinimumCalls = rapid.IntRange(1, cfg.WindowCalls).Draw(rt, "minimum")
		} else {
			cfg.WindowPeriod = time.Duration(rapid.IntRange(1, 20).Draw(rt, "seconds")) * time.Second
			cfg.MinimumCalls = rapid.IntRange(1, 40).Draw(rt, "minimum")
		}
		if rapid.Bool().Draw(rt, "slow") {
			cfg.SlowCall = time.Duration(rapid.IntRange(1, 3000).Draw(rt, "slowms")) * time.Millisecond
			m.slowPct = rapid.IntRange(1, 100).Draw(rt, "slowrate")
			cfg.SlowRate = float64(m.slowPct) / 100
		}
		cfg.FailureThreshold = rapid.SampledFrom([]int{0, 0, 1, 3, 6}).Draw(rt, "threshold")
		m.cfg = cfg
		clk := newFakeClock()
		opts := []runtime.Option{runtime.WithLogger(discardLogger()), runtime.WithoutEnv()}
		if !real {
			opts = append(opts, runtime.WithClock(clk))
		}
		reg := runtime.NewRegistry(opts...)
		b := reg.Breaker(cfg)
		if real {
			m.origin = m.now.Add(-time.Nanosecond) // the breaker's anchor: see stamps
		}
		ctx := context.Background()
		advance := func(d time.Duration) {
			if real {
				time.Sleep(d)
				synctest.Wait() // the timers due by now have run
			} else {
				clk.Advance(d)
			}
			m.now = m.now.Add(d)
		}

		rt.Repeat(map[string]func(*rapid.T){
			"call": func(rt *rapid.T) {
				if m.state == runtime.Open { // recover: the window, then a probe
					advance(cfg.ResetTimeout)
					require.NoError(rt, b.Do(ctx, func(context.Context) error { return nil }))
					m.state, m.calls, m.consecutive = runtime.Closed, nil, 0
				}
				o := rapid.SampledFrom([]runtime.Outcome{runtime.Success, runtime.Failure, runtime.Ignored}).Draw(rt, "outcome")
				d := time.Duration(rapid.IntRange(0, 4000).Draw(rt, "ms")) * time.Millisecond
				tok, err := b.Acquire(ctx)
				require.NoError(rt, err, "the model is CLOSED")
				advance(d)
				if o == runtime.Success && real {
					b.Release(tok, nil) // the lock-free path, when it can
				} else {
					b.Record(tok, o, errors.New("upstream"))
				}
				if o == runtime.Ignored {
					return
				}
				if reason := m.end(o == runtime.Failure, cfg.SlowCall > 0 && d > cfg.SlowCall); reason != "" {
					m.state, m.calls, m.consecutive = runtime.Open, nil, 0
					evs := reg.Events(1)
					require.NotEmpty(rt, evs, "the model tripped: %s", reason)
					require.Equal(rt, reason, evs[0].Reason)
				}
			},
			"advance": func(rt *rapid.T) {
				advance(time.Duration(rapid.IntRange(1, 3000).Draw(rt, "ms")) * time.Millisecond)
			},
			"": func(rt *rapid.T) {
				st := b.Stats()
				if m.state != runtime.Closed { // OPEN, or HALF_OPEN once the reset ran out
					require.NotEqual(rt, runtime.Closed, st.State)
					require.Zero(rt, st.WindowCalls, "the window is emptied at every transition")
					return
				}
				require.Equal(rt, runtime.Closed, st.State)
				calls, failures, slow := m.counts()
				require.Equal(rt, calls, st.WindowCalls, "window calls")
				require.Equal(rt, failures, st.WindowFailures, "window failures")
				require.Equal(rt, slow, st.WindowSlow, "window slow calls")
				if calls > 0 {
					require.Equal(rt, float64(failures)/float64(calls), st.FailureRate)
					require.Equal(rt, float64(slow)/float64(calls), st.SlowRate)
				}
			},
		})
	})
}

// inflightCall is a call the inflight model holds.
type inflightCall struct {
	tok     runtime.Token
	start   time.Time
	period  int
	counted bool // found overdue: its outcome is ignored
}

// TestInFlightMatchesModel drives random seeded streams of calls that start
// and end out of order, time passing and looks at the state through a
// breaker with InFlight (and sometimes a count window) against a model
// that keeps every call in flight: overdue calls count once as failures,
// at the admission or look that finds them or when they end, and the
// breaker trips exactly when the model says, with its reason.
func TestInFlightMatchesModel(t *testing.T) {
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		_ = f.Value.Set("1000")
		defer func() { _ = f.Value.Set(f.DefValue) }()
	}
	rapid.Check(t, func(rt *rapid.T) {
		limit := time.Duration(rapid.IntRange(1, 5).Draw(rt, "inflight")) * time.Second
		cfg := runtime.Config{Name: "i", ResetTimeout: time.Second, InFlight: limit}
		m := &windowModel{now: t0}
		if rapid.Bool().Draw(rt, "window") {
			cfg.WindowCalls = rapid.IntRange(10, 20).Draw(rt, "calls")
			cfg.MinimumCalls = rapid.IntRange(1, 10).Draw(rt, "minimum")
			m.failPct = rapid.IntRange(1, 100).Draw(rt, "failrate")
			cfg.FailureRate = float64(m.failPct) / 100
			cfg.FailureThreshold = rapid.SampledFrom([]int{0, 2, 4}).Draw(rt, "threshold")
		} else {
			cfg.FailureThreshold = rapid.IntRange(1, 4).Draw(rt, "threshold")
			m.failPct = 101 // no window: no rate trips
			cfg.MinimumCalls = 1 << 30
		}
		m.cfg = cfg
		if cfg.WindowCalls == 0 {
			m.cfg.WindowCalls = 1 << 30 // the model's list holds every call
		}
		clk := newFakeClock()
		reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()), runtime.WithoutEnv())
		b := reg.Breaker(cfg)
		ctx := context.Background()
		period, failures := 1, uint64(0)
		var held []*inflightCall
		advance := func(d time.Duration) {
			clk.Advance(d)
			m.now = m.now.Add(d)
		}
		trip := func(reason string) {
			m.state, m.calls, m.consecutive = runtime.Open, nil, 0
			period++
			evs := reg.Events(1)
			require.NotEmpty(rt, evs)
			require.Equal(rt, reason, evs[0].Reason)
		}
		// failed counts one failure of the current period; it reports
		// whether it tripped the breaker.
		failed := func(reason string) bool {
			failures++
			if m.state != runtime.Closed {
				return false
			}
			if r := m.end(true, false); r != "" {
				if r == "upstream" {
					r = reason
				}
				trip(r)
				return true
			}
			return false
		}
		// overdue counts the calls of the current period found overdue, as
		// the breaker does at an admission or a look.
		overdue := func() {
			var found []*inflightCall
			for _, c := range held {
				if !c.counted && c.period == period && m.now.Sub(c.start) > limit {
					found = append(found, c)
				}
			}
			if len(found) == 0 || m.state != runtime.Closed {
				return
			}
			reason := fmt.Sprintf("call in flight %s > inflight=%s", m.now.Sub(found[0].start), limit)
			for _, c := range found {
				c.counted = true
				failed(reason)
			}
		}

		rt.Repeat(map[string]func(*rapid.T){
			"start": func(rt *rapid.T) {
				if m.state != runtime.Closed { // recover: the window, then a probe
					advance(cfg.ResetTimeout)
					require.NoError(rt, b.Do(ctx, func(context.Context) error { return nil }))
					m.state, m.calls, m.consecutive = runtime.Closed, nil, 0
					period++
				}
				tok, err := b.Acquire(ctx)
				overdue()
				if m.state != runtime.Closed {
					require.ErrorIs(rt, err, runtime.ErrOpen, "the admission that trips is refused")
					return
				}
				require.NoError(rt, err)
				held = append(held, &inflightCall{tok: tok, start: m.now, period: period})
			},
			"end": func(rt *rapid.T) {
				if len(held) == 0 {
					rt.Skip("nothing in flight")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(rt, "call")
				c := held[i]
				held = append(held[:i], held[i+1:]...)
				o := rapid.SampledFrom([]runtime.Outcome{runtime.Success, runtime.Failure, runtime.Ignored}).Draw(rt, "outcome")
				b.Record(c.tok, o, errors.New("upstream"))
				if c.counted {
					return
				}
				// Past the limit, any outcome is a failure, one that
				// counts as neither included: as a look would have found
				// it (docs/window.md), whether or not there was one.
				ran := m.now.Sub(c.start)
				if ran > limit {
					o = runtime.Failure
				} else if o == runtime.Ignored {
					return
				}
				if c.period != period {
					if o == runtime.Failure {
						failures++
					}
					return
				}
				if o == runtime.Failure {
					reason := "upstream"
					if ran > limit {
						reason = fmt.Sprintf("call in flight %s > inflight=%s", ran, limit)
					}
					failed(reason)
					return
				}
				if r := m.end(false, false); r != "" {
					trip(r)
				}
			},
			"advance": func(rt *rapid.T) {
				advance(time.Duration(rapid.IntRange(1, 2000).Draw(rt, "ms")) * time.Millisecond)
			},
			"look": func(rt *rapid.T) {
				_ = b.State()
				overdue()
			},
			"": func(rt *rapid.T) {
				st := b.Stats()
				overdue() // Stats looks too
				if m.state != runtime.Closed {
					require.NotEqual(rt, runtime.Closed, st.State)
				} else {
					require.Equal(rt, runtime.Closed, st.State)
					if cfg.WindowCalls > 0 {
						calls, fails, _ := m.counts()
						require.Equal(rt, calls, st.WindowCalls)
						require.Equal(rt, fails, st.WindowFailures)
					}
					require.Equal(rt, m.consecutive, st.ConsecutiveFailures)
				}
				require.Equal(rt, len(held), st.InFlight, "calls in flight")
				require.Equal(rt, failures, st.Failures, "failures")
			},
		})
	})
}
