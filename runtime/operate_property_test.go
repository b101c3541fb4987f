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
// off (SPEC §14), written as plainly.
type opModel struct {
	model
	failedProbes int // failed probes in a row, for ResetMax
	reconf       int // reconfigured events since the last reset
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
	if to == runtime.Open && from == runtime.HalfOpen && m.cfg.ResetMax > 0 {
		d := m.cfg.ResetTimeout
		for i := 0; i < m.failedProbes && d < m.cfg.ResetMax; i++ {
			d *= 2
		}
		m.nextProbe = at.Add(min(d, m.cfg.ResetMax))

	}
}

// advance is model.advance with this model's moves.
func (m *opModel) advance(t time.Time) {
	for {
		switch m.state {
		case runtime.Open:
			if t.Before(m.nextProbe) {
				m.now = t
				return
			}
			m.move(runtime.HalfOpen, m.nextProbe)
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
				m.move(runtime.Open, first)
				continue
			}
		}
		m.now = t
		return
	}
}

// failed counts a failure of a call admitted in the current period.
func (m *opModel) failed(probe bool) {
	if probe {
		m.move(runtime.Open, m.now)
		return
	}
	m.fails++
	if m.state == runtime.Closed && m.fails >= m.cfg.FailureThreshold {
		m.move(runtime.Open, m.now)
	}
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
		clk := newFakeClock()
		reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithLogger(discardLogger()), runtime.WithEventCapacity(100000),
			runtime.WithoutEnv())
		b := reg.Breaker(cfg)
		m := &opModel{model: model{cfg: b.Config(), now: t0, period: 1, probes: map[int]time.Time{}, reclaimed: map[int]bool{}}}
		var held []heldToken
		ctx := context.Background()

		admits := func() bool {
			switch m.state {
			case runtime.Closed, runtime.Bypassed:
				return true
			case runtime.HalfOpen:
				return len(m.probes) < m.cfg.HalfOpenMax
			}
			return false
		}

		rt.Repeat(map[string]func(*rapid.T){
			"acquire": func(rt *rapid.T) {
				tok, err := b.Acquire(ctx)
				if admits() != (err == nil) {
					rt.Fatalf("model admits=%v, breaker err=%v (state %v)", admits(), err, m.state)
				}
				if err != nil {
					if !errors.Is(err, runtime.ErrOpen) {
						rt.Fatalf("rejection %v does not match ErrOpen", err)
					}
					return
				}
				h := heldToken{tok: tok, period: m.period, probe: m.state == runtime.HalfOpen, open: true}
				if h.probe {
					m.probes[len(held)] = m.now.Add(m.cfg.ResetTimeout)
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
					return
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
						m.failed(true)
					}
					return
				}
				switch o {
				case runtime.Success:
					m.fails = 0
				case runtime.Failure:
					m.failed(false)
				}
			},
			"fail": func(rt *rapid.T) {
				admit, probe := admits(), m.state == runtime.HalfOpen
				err := b.Do(ctx, func(context.Context) error { return errors.New("down") })
				if errors.Is(err, runtime.ErrOpen) != !admit {
					rt.Fatalf("model admits=%v, breaker err=%v (state %v)", admit, err, m.state)
				}
				if admit {
					m.failures++
					m.failed(probe)
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
				m.failures, m.ignored = 0, 0
				m.events, m.reconf = 0, 0
				held = held[:0:0]
				m.reclaimed = map[int]bool{}
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
				if err := reg.Update(u); err != nil {
					rt.Fatalf("Update(%+v): %v", u, err)
				}
				before := m.cfg
				if u.FailureThreshold > 0 {
					m.cfg.FailureThreshold = u.FailureThreshold
				}
				if u.ResetTimeout > 0 {
					m.cfg.ResetTimeout = u.ResetTimeout
				}
				if u.ResetMax > 0 {
					m.cfg.ResetMax = u.ResetMax
				}
				if m.cfg.ResetMax <= m.cfg.ResetTimeout {
					m.cfg.ResetMax = 0
				}
				if u.HalfOpenMax > 0 {
					m.cfg.HalfOpenMax = u.HalfOpenMax
				}
				if u.SuccessThreshold > 0 {
					m.cfg.SuccessThreshold = u.SuccessThreshold
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
				if st.State != m.state {
					rt.Fatalf("state %v, model %v", st.State, m.state)
				}
				if st.ProbesInFlight != len(m.probes) {
					rt.Fatalf("%d probes in flight, model %d", st.ProbesInFlight, len(m.probes))
				}
				if (st.State == runtime.Closed || st.State == runtime.Bypassed) && st.ConsecutiveFailures != m.fails {
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
