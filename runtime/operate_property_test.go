package runtime_test

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/breakergen/breakergen/runtime"
)

// opModel is the reference breaker of TestOperatorsMatchModel: model (see
// property_test.go) with the operator's modes, live settings and backing
// off (SPEC §14), a count window, in-flight timing and a bulkhead (SPEC §8,
// §9), written as plainly.
type opModel struct {
	model
	failedProbes int // failed probes in a row, for ResetMax
	reconf       int // reconfigured events since the last reset

	win          []bool // the window's outcomes of this period, failed or not, oldest first
	tracking     bool   // the window times calls (InFlight)
	periodLoad   bool   // this period's calls take a bulkhead slot
	inUse        int    // slots taken
	bulkheadFull uint64
	stuck        int // timed calls of tokens a reset dropped: in flight for good
}

// opToken is a call held by the test.
type opToken struct {
	heldToken
	slot    bool      // holds a bulkhead slot
	tracked bool      // timed by the current window
	counted bool      // counted as overdue: its outcome is ignored
	start   time.Time // when it was admitted
}

func (m *opModel) move(to runtime.State, at time.Time) {
	if m.state == to {
		return
	}
	from := m.state
	switch {
	case from == runtime.HalfOpen && to == runtime.Open:
		m.failedProbes++
	case to != runtime.Open && to != runtime.HalfOpen:
		m.failedProbes = 0
	}
	m.model.move(to, at)
	m.newPeriod()
	if to == runtime.Open && from == runtime.HalfOpen && m.cfg.ResetMax > 0 {
		d := m.cfg.ResetTimeout
		for i := 0; i < m.failedProbes && d < m.cfg.ResetMax; i++ {
			d *= 2
		}
		m.nextProbe = at.Add(min(d, m.cfg.ResetMax))

	}
}

// advance is model.advance with this model's moves.
func (m *opModel) advance(t time.Time) { m.advanceWith(t, m.move) }

// newPeriod is what every state period starts with: an empty window, and
// the bulkhead as the settings have it.
func (m *opModel) newPeriod() {
	m.win = nil
	m.periodLoad = m.cfg.Concurrency > 0
}

// live reports whether the state counts the calls it admits (and times
// them): CLOSED and BYPASSED.
func (m *opModel) live() bool { return m.state == runtime.Closed || m.state == runtime.Bypassed }

// record adds an outcome of this period's CLOSED (or BYPASSED) call to
// the window, and trips on its rate.
func (m *opModel) record(failed bool) {
	n := m.cfg.WindowCalls
	if n == 0 {
		return
	}
	m.win = append(m.win, failed)
	if len(m.win) > n {
		m.win = m.win[1:]
	}
	calls, failures := m.window()
	if m.state == runtime.Closed && calls >= m.cfg.MinimumCalls && float64(failures)/float64(calls) >= m.cfg.FailureRate {
		m.move(runtime.Open, m.now)
	}
}

func (m *opModel) window() (calls, failures int) {
	for _, f := range m.win {
		if f {
			failures++
		}
	}
	return len(m.win), failures
}

// closed counts outcome o of a call admitted in this CLOSED or BYPASSED
// period.
func (m *opModel) closed(o runtime.Outcome) {
	switch o {
	case runtime.Success:
		m.fails = 0
		m.record(false)
	case runtime.Failure:
		m.fails++
		if m.state == runtime.Closed && m.cfg.FailureThreshold > 0 && m.fails >= m.cfg.FailureThreshold {
			m.move(runtime.Open, m.now)
			return
		}
		m.record(true)
	}
}

// overdue counts the timed calls of this period in flight longer than
// InFlight, as every admission and look at the state does.
func (m *opModel) overdue(held []opToken) {
	if !m.live() || !m.tracking || m.cfg.InFlight == 0 {
		return
	}
	p := m.period
	n := 0
	for i := range held {
		h := &held[i]
		if h.open && h.tracked && !h.counted && h.period == p && m.now.Sub(h.start) > m.cfg.InFlight {
			h.counted = true
			n++
		}
	}
	for range n {
		m.failures++
		if m.period == p {
			m.closed(runtime.Failure)
		}
	}
}

// full reports whether a call of this period finds no free slot.
func (m *opModel) full() bool {
	return m.periodLoad && m.cfg.Concurrency > 0 && m.inUse >= m.cfg.Concurrency
}

// timed reports whether a call admitted now is timed: the window times
// CLOSED calls, and BYPASSED ones unless they are timed from their slot
// (which only CLOSED calls are).
func (m *opModel) timed() bool {
	slotTimed := m.cfg.Concurrency > 0
	return m.tracking && (m.state == runtime.Closed || m.state == runtime.Bypassed && !slotTimed)
}

// TestOperatorsMatchModel interleaves random calls, outcomes, time,
// resets, Updates and mode changes, and checks SPEC §4's invariants after
// each step: the state and the exact counters of the model, no HALF_OPEN
// that can stay stuck, an outcome counting only in the period that
// admitted it, and every event a transition or a reconfiguration. It runs
// 300 sequences of up to 150 steps by default (-rapid.checks and
// -rapid.steps to change).
func TestOperatorsMatchModel(t *testing.T) {
	for name, n := range map[string]string{"rapid.checks": "300", "rapid.steps": "150"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() == f.DefValue {
			_ = f.Value.Set(n)
			defer func() { _ = f.Value.Set(f.DefValue) }()
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		cfg := runtime.Config{
			Name:             "op",
			FailureThreshold: rapid.IntRange(1, 3).Draw(rt, "threshold"),
			ResetTimeout:     time.Duration(rapid.IntRange(1, 5).Draw(rt, "reset")) * time.Second,
			HalfOpenMax:      rapid.IntRange(1, 3).Draw(rt, "halfopen"),
			SuccessThreshold: rapid.IntRange(1, 2).Draw(rt, "successes"),
		}
		if rapid.Bool().Draw(rt, "backoff") {
			cfg.ResetMax = cfg.ResetTimeout * time.Duration(rapid.IntRange(2, 8).Draw(rt, "cap factor"))
		}
		if rapid.Bool().Draw(rt, "window") {
			cfg.WindowCalls = rapid.IntRange(10, 12).Draw(rt, "window calls")
			cfg.MinimumCalls = rapid.IntRange(1, 10).Draw(rt, "minimum")
			cfg.FailureRate = rapid.SampledFrom([]float64{0.3, 0.5, 1}).Draw(rt, "failrate")
		}
		if rapid.Bool().Draw(rt, "inflight") {
			cfg.InFlight = time.Duration(rapid.IntRange(1, 4).Draw(rt, "inflight s")) * time.Second
		}
		if rapid.Bool().Draw(rt, "concurrency") {
			cfg.Concurrency = rapid.IntRange(1, 3).Draw(rt, "slots")
		}
		clk := newFakeClock()
		reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()), runtime.WithEventCapacity(100000),
			runtime.WithoutEnv())
		b := reg.Breaker(cfg)
		m := &opModel{model: model{cfg: b.Config(), now: t0, period: 1, probes: map[int]time.Time{}, reclaimed: map[int]bool{}}}
		m.tracking = m.cfg.InFlight > 0
		m.newPeriod()
		var held []opToken
		// A call that finds no free slot is refused at once.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()

		admits := func() bool {
			switch m.state {
			case runtime.Closed, runtime.Bypassed:
				return true
			case runtime.HalfOpen:
				return len(m.probes) < m.cfg.HalfOpenMax
			}
			return false
		}
		// refused checks err, the refusal of a call the model does not
		// admit, or of one that finds the bulkhead full; false when the
		// model admits it.
		refused := func(rt *rapid.T, err error) bool {
			if !admits() {
				if !errors.Is(err, runtime.ErrOpen) {
					rt.Fatalf("model rejects (state %v), breaker err=%v", m.state, err)
				}
				return true
			}
			if m.full() {
				if !errors.Is(err, runtime.ErrBulkheadFull) {
					rt.Fatalf("model finds every slot of %d in use, breaker err=%v", m.cfg.Concurrency, err)
				}
				m.bulkheadFull++
				return true
			}
			return false
		}

		rt.Repeat(map[string]func(*rapid.T){
			"acquire": func(rt *rapid.T) {
				tok, err := b.Acquire(ctx)
				m.overdue(held)
				if refused(rt, err) {
					return
				}
				if err != nil {
					rt.Fatalf("model admits (state %v), breaker err=%v", m.state, err)
				}
				h := opToken{heldToken: heldToken{tok: tok, period: m.period, probe: m.state == runtime.HalfOpen, open: true},
					slot: m.periodLoad, tracked: m.timed(), start: m.now}
				if h.probe {
					m.probes[len(held)] = m.now.Add(m.cfg.ResetTimeout)
				}
				if h.slot {
					m.inUse++
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
				h := held[i]
				if h.slot {
					m.inUse--
				}
				if m.reclaimed[i] {
					return
				}
				if h.tracked {
					if h.counted {
						return // counted when it was found overdue
					}
					if m.now.Sub(h.start) > m.cfg.InFlight {
						o = runtime.Failure // ran too long, whatever it says
					}
				}
				switch o {
				case runtime.Failure:
					m.failures++
				case runtime.Ignored:
					m.ignored++
				}
				if h.period != m.period {
					return // an older period: ignored
				}
				if h.probe {
					if _, ok := m.probes[i]; !ok {
						return
					}
					delete(m.probes, i)
					switch o {
					case runtime.Success:
						m.wins++
						if m.wins >= m.cfg.SuccessThreshold {
							m.move(runtime.Closed, m.now)
						}
					case runtime.Failure:
						m.move(runtime.Open, m.now)
					}
					return
				}
				m.closed(o)
			},
			"fail": func(rt *rapid.T) {
				err := b.Do(ctx, func(context.Context) error { return errors.New("down") })
				m.overdue(held)
				if refused(rt, err) {
					return
				}
				if err == nil || err.Error() != "down" {
					rt.Fatalf("model admits (state %v), breaker err=%v", m.state, err)
				}
				m.failures++
				if m.state == runtime.HalfOpen {
					m.move(runtime.Open, m.now)
				} else {
					m.closed(runtime.Failure)
				}
			},
			"advance": func(rt *rapid.T) {
				d := time.Duration(rapid.IntRange(1, 8000).Draw(rt, "ms")) * time.Millisecond
				clk.Advance(d)
				m.advance(m.now.Add(d))
			},
			"due": func(rt *rapid.T) { // to the end of the OPEN period: drives probes and backing off
				if m.state != runtime.Open {
					rt.Skip("not OPEN")
				}
				d := m.nextProbe.Sub(m.now)
				clk.Advance(d)
				m.advance(m.now.Add(d))
			},
			"reset": func(rt *rapid.T) {
				b.Reset()
				if m.state != runtime.Isolated && m.state != runtime.Bypassed {
					m.state = runtime.Closed // a mode stays
				}
				m.fails, m.wins, m.failedProbes = 0, 0, 0
				m.period++
				m.probes = map[int]time.Time{}
				m.failures, m.ignored, m.bulkheadFull = 0, 0, 0
				m.events, m.reconf = 0, 0
				for _, h := range held {
					if h.open && h.tracked {
						m.stuck++ // dropped, never released: in flight for good
					}
				}
				held = held[:0:0] // the slots they hold stay taken
				m.reclaimed = map[int]bool{}
				m.newPeriod()
			},
			"mode": func(rt *rapid.T) {
				to := rapid.SampledFrom([]runtime.State{runtime.Isolated, runtime.Bypassed, runtime.Closed}).Draw(rt, "mode")
				switch to {
				case runtime.Isolated:
					b.Isolate("maintenance")
				case runtime.Bypassed:
					b.Bypass("by hand")
				default:
					b.Resume("back")
					if m.state == runtime.Closed {
						// Fresh counts, with no transition (SPEC §14).
						m.period++
						m.fails, m.wins = 0, 0
						m.probes = map[int]time.Time{}
						m.newPeriod()
					}
				}
				m.move(to, m.now)
			},
			"update": func(rt *rapid.T) {
				u := runtime.Config{Name: "op"}
				if rapid.Bool().Draw(rt, "set threshold") {
					u.FailureThreshold = rapid.IntRange(1, 4).Draw(rt, "new threshold")
				}
				if rapid.Bool().Draw(rt, "set reset") {
					u.ResetTimeout = time.Duration(rapid.IntRange(1, 5).Draw(rt, "new reset")) * time.Second
				}
				if rapid.Bool().Draw(rt, "set backoff") {
					u.ResetMax = max(u.ResetTimeout, m.cfg.ResetTimeout) * time.Duration(rapid.IntRange(2, 8).Draw(rt, "factor"))
				}
				if rapid.Bool().Draw(rt, "set halfopen") {
					u.HalfOpenMax = rapid.IntRange(1, 3).Draw(rt, "new halfopen")
				}
				if rapid.Bool().Draw(rt, "set successes") {
					u.SuccessThreshold = rapid.IntRange(1, 2).Draw(rt, "new successes")
				}
				windowed := m.cfg.WindowCalls > 0
				switch rapid.IntRange(0, 3).Draw(rt, "set window") {
				case 1:
					u.WindowCalls = rapid.IntRange(10, 12).Draw(rt, "new window")
					windowed = true
				case 2:
					if windowed {
						u.Off |= runtime.SettingWindow
						windowed = false
					}
				}
				if windowed {
					u.FailureRate = rapid.SampledFrom([]float64{0, 0.3, 0.5, 1}).Draw(rt, "new failrate")
					u.MinimumCalls = rapid.IntRange(0, 10).Draw(rt, "new minimum")
					if u.FailureThreshold == 0 && rapid.Bool().Draw(rt, "threshold off") {
						u.Off |= runtime.SettingThreshold
					}
				}
				switch rapid.IntRange(0, 3).Draw(rt, "set inflight") {
				case 1:
					u.InFlight = time.Duration(rapid.IntRange(1, 4).Draw(rt, "new inflight")) * time.Second
				case 2:
					u.Off |= runtime.SettingInFlight
				}
				switch rapid.IntRange(0, 3).Draw(rt, "set concurrency") {
				case 1:
					u.Concurrency = rapid.IntRange(1, 3).Draw(rt, "new slots")
				case 2:
					u.Off |= runtime.SettingConcurrency
				}
				if u.ResetTimeout > 0 && u.ResetMax == 0 && m.cfg.ResetMax > 0 && u.ResetTimeout >= m.cfg.ResetMax {
					// A reset at the backoff's cap turns backoff off, which
					// Update wants said (TestUpdateResetPastTheBackoffCap).
					u.Off |= runtime.SettingBackoff
				}
				if err := reg.Update(u); err != nil {
					rt.Fatalf("Update(%+v): %v", u, err)
				}
				before := m.cfg
				next := m.cfg
				if u.Off&runtime.SettingThreshold != 0 {
					next.FailureThreshold = 0
				}
				if u.Off&runtime.SettingWindow != 0 {
					next.WindowCalls = 0
				}
				if u.Off&runtime.SettingInFlight != 0 {
					next.InFlight = 0
				}
				if u.Off&runtime.SettingConcurrency != 0 {
					next.Concurrency = 0
				}
				set := func(dst *int, v int) {
					if v > 0 {
						*dst = v
					}
				}
				set(&next.FailureThreshold, u.FailureThreshold)
				set(&next.HalfOpenMax, u.HalfOpenMax)
				set(&next.SuccessThreshold, u.SuccessThreshold)
				set(&next.WindowCalls, u.WindowCalls)
				set(&next.MinimumCalls, u.MinimumCalls)
				set(&next.Concurrency, u.Concurrency)
				if u.ResetTimeout > 0 {
					next.ResetTimeout = u.ResetTimeout
				}
				if u.ResetMax > 0 {
					next.ResetMax = u.ResetMax
				}
				if u.Off&runtime.SettingBackoff != 0 {
					next.ResetMax = 0
				}
				if next.ResetMax <= next.ResetTimeout {
					next.ResetMax = 0
				}
				if u.FailureRate > 0 {
					next.FailureRate = u.FailureRate
				}
				if u.InFlight > 0 {
					next.InFlight = u.InFlight
				}
				if next.WindowCalls == 0 {
					next.FailureRate, next.MinimumCalls = 0, 0
				} else {
					if next.FailureRate == 0 {
						next.FailureRate = 0.5
					}
					if next.MinimumCalls == 0 {
						next.MinimumCalls = 20
					}
					next.MinimumCalls = min(next.MinimumCalls, next.WindowCalls)
				}
				if next.FailureThreshold == 0 && next.WindowCalls == 0 {
					next.FailureThreshold = runtime.DefaultFailureThreshold
				}
				// What changes shape: a new window, empty, from a new
				// counting period in CLOSED and BYPASSED; a bulkhead on or
				// off, for the calls admitted from now on.
				reshaped := next.WindowCalls != before.WindowCalls || (next.InFlight > 0) != (before.InFlight > 0)
				load := (next.Concurrency > 0) != (before.Concurrency > 0)
				m.cfg = next
				if reshaped {
					for i := range held {
						held[i].tracked = false
					}
					m.stuck = 0
					m.tracking = next.InFlight > 0
					m.win = nil
					if m.live() {
						m.period++
					}
				}
				if (reshaped || load) && m.live() {
					m.periodLoad = next.Concurrency > 0
				}
				if m.cfg != before {
					m.reconf++
				}
				if got := b.Config(); got != m.cfg {
					rt.Fatalf("config %+v, model %+v", got, m.cfg)
				}
			},
			"": func(rt *rapid.T) {
				st := b.Stats()
				m.overdue(held)
				if st.State != m.state {
					rt.Fatalf("state %v, model %v", st.State, m.state)
				}
				if st.ProbesInFlight != len(m.probes) {
					rt.Fatalf("%d probes in flight, model %d", st.ProbesInFlight, len(m.probes))
				}
				if m.live() && st.ConsecutiveFailures != m.fails {
					rt.Fatalf("consecutive failures %d, model %d", st.ConsecutiveFailures, m.fails)
				}
				if st.State == runtime.HalfOpen && st.ConsecutiveSuccesses != m.wins {
					rt.Fatalf("probe successes %d, model %d", st.ConsecutiveSuccesses, m.wins)
				}
				if st.Failures != m.failures || st.Ignored != m.ignored {
					rt.Fatalf("failures/ignored %d/%d, model %d/%d", st.Failures, st.Ignored, m.failures, m.ignored)
				}
				if calls, failures := m.window(); st.WindowCalls != calls || st.WindowFailures != failures {
					rt.Fatalf("window %d calls %d failed, model %d %d", st.WindowCalls, st.WindowFailures, calls, failures)
				}
				switch {
				case m.cfg.Concurrency > 0:
					if st.InFlight != m.inUse || st.BulkheadFull != m.bulkheadFull {
						rt.Fatalf("%d slots in use, %d refused; model %d, %d", st.InFlight, st.BulkheadFull, m.inUse, m.bulkheadFull)
					}
				case m.tracking:
					n := m.stuck
					for _, h := range held {
						if h.open && h.tracked {
							n++
						}
					}
					if st.InFlight != n {
						rt.Fatalf("%d calls timed in flight, model %d", st.InFlight, n)
					}
				}
				if st.State == runtime.Open && !st.NextProbe.Equal(m.nextProbe) {
					rt.Fatalf("next probe %v, model %v", st.NextProbe, m.nextProbe)
				}
				if st.State != runtime.Open && !st.NextProbe.IsZero() {
					rt.Fatalf("next probe %v in %v", st.NextProbe, st.State)
				}
				if st.StateChanges != uint64(m.events) {
					rt.Fatalf("%d state changes, model %d", st.StateChanges, m.events)
				}
				evs := reg.Events(100000)
				if len(evs) < m.events+m.reconf {
					rt.Fatalf("%d events, model %d transitions and %d reconfigurations", len(evs), m.events, m.reconf)
				}
				for i, ev := range evs {
					if ev.Reason == "" || ev.From == ev.To && !strings.HasPrefix(ev.Reason, "reconfigured: ") {
						rt.Fatalf("event %d is neither a transition nor a reconfiguration: %+v", i, ev)
					}
				}
				// Never stuck: a pending probe's deadline is within the
				// longest window from now.
				if st.State == runtime.HalfOpen {
					for _, dl := range m.probes {
						if dl.Sub(m.now) > 5*time.Second {
							rt.Fatalf("probe deadline %v beyond any window from %v", dl, m.now)
						}
					}
				}
			},
		})
	})
}
