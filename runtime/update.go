package runtime

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Live settings (SPEC §14). A breaker's settings are one Config value
// behind an atomic pointer (Breaker.cfg): Update builds the next value,
// with the same layering as creation (a field given replaces the current
// one) and the same defaults, and stores it whole, so that every reader
// sees one Config or the other, never a mix. The state and every count
// stay: the trip rule keeps its shape (a threshold, a rate, a minimum, a
// period), so what was counted still means the same. A change of shape (a
// window where there was none or another one, slow or in-flight timing
// turned on or off, a bulkhead, a throttle) would need fresh counts and
// new structures; Update refuses it, naming the field, and such a setting
// changes where it is made, at creation.

// Update changes the settings of live breakers, each cfg naming one by its
// Name, while they run: a field that is not zero replaces the breaker's
// current value, a zero field keeps it (as [WithConfig] layers).
//
// Every cfg is checked first, and nothing changes if one is wrong; the
// error names the Config (its index and Name) and the field. Update is
// strict where creation is lenient, so that an operator's typo cannot pass
// silently: a negative or NaN field, a rate (FailureRate, SlowRate,
// ResetJitter) above 1, a ResetMax below the ResetTimeout it would apply
// to, a Name the registry has no breaker of, and a change of a setting
// that shapes what the breaker counts (WindowCalls, WindowPeriod, SlowCall
// or InFlight turned on or off, Concurrency, Throttle) are errors. Two
// Configs of one name apply in order.
//
// A breaker keeps its state and its counts: an OPEN breaker keeps its
// window (a new ResetTimeout applies from its next OPEN period), and a
// CLOSED one keeps its consecutive failures and its window, judged by the
// new threshold and rates from the next outcome on (one that is already
// past a lowered threshold trips at its next failure). Each breaker whose
// settings changed records one [Event] whose From and To are both its
// current state (the one Event that is not a transition), reason
// "reconfigured: threshold 5→3, reset 30s→1m0s" in the words of the
// annotation keys, and the hooks are called with it. Rate limits change
// live with [Registry.UpdateRateLimit].
//
// A Name may be a [Family]'s: the Config then applies to the breaker of
// every live key of the family (each records its Event) and to the keys
// made later (their breakers start with the family's new settings). A key's
// own name ("<family>/<key>") changes that key's breaker alone, for as
// long as it lives: a key dropped and made again starts from the family's
// settings. When a name is both a breaker's and a family's, both change.
func (r *Registry) Update(cfgs ...Config) error {
	type change struct {
		b    *Breaker
		next Config
	}
	type famChange struct {
		f     *Family
		next  Config
		seen  map[*Breaker]bool // the live keys when it was checked
		steps []Config          // the Configs naming it, in order
	}
	var changes []change
	var fams []*famChange
	pending := map[*Breaker]int{} // index in changes
	famIndex := map[*Family]int{}
	// step layers c on b's settings as they stand after the earlier Configs.
	step := func(b *Breaker, c Config) error {
		j, seen := pending[b]
		if !seen {
			j = len(changes)
			pending[b] = j
			changes = append(changes, change{b: b, next: *b.cfg()})
		}
		cur := changes[j].next
		next, err := layer(cur, c)
		if err != nil {
			return err
		}
		changes[j].next = next
		return nil
	}
	for i, c := range cfgs {
		where := fmt.Sprintf("breaker: Update: Config %d (Name %q)", i, c.Name)
		if err := checkUpdate(c); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		b, ok := r.Lookup(c.Name)
		families := r.familiesNamed(c.Name)
		if !ok && len(families) == 0 {
			return fmt.Errorf("%s: the registry has no breaker called %q", where, c.Name)
		}
		if ok {
			if err := step(b, c); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
		for _, f := range families {
			j, seen := famIndex[f]
			if !seen {
				j = len(fams)
				famIndex[f] = j
				fc := &famChange{f: f, next: f.Config(), seen: map[*Breaker]bool{}}
				for _, kb := range f.breakers() {
					fc.seen[kb] = true
				}
				fams = append(fams, fc)
			}
			fc := fams[j]
			next, err := layer(fc.next, c)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			fc.next = next
			fc.steps = append(fc.steps, c)
			for kb := range fc.seen {
				if err := step(kb, c); err != nil {
					return fmt.Errorf("%s: key %q: %w", where, kb.Name(), err)
				}
			}
		}
	}
	for _, fc := range fams {
		// Keys made since the check took the family's old settings: they
		// take the same steps, from theirs.
		for _, kb := range fc.f.reconfigure(fc.next) {
			if fc.seen[kb] {
				continue
			}
			next := *kb.cfg()
			for _, c := range fc.steps {
				if n, err := layer(next, c); err == nil {
					next = n
				}
			}
			changes = append(changes, change{b: kb, next: next})
		}
	}
	for _, c := range changes {
		c.b.reconfigure(c.next)
	}
	return nil
}

// layer returns cur with the fields of c that are not zero, defaults
// applied, Name kept; an error when that changes what the breaker counts.
func layer(cur, c Config) (Config, error) {
	next := override{cfg: c}.apply(cur)
	next.Name = cur.Name
	next = next.withDefaults()
	if err := checkShape(cur, next); err != nil {
		return cur, err
	}
	if c.ResetMax > 0 && next.ResetMax == 0 {
		return cur, fmt.Errorf("ResetMax %s is not above ResetTimeout %s", c.ResetMax, next.ResetTimeout)
	}
	return next, nil
}

// checkUpdate refuses the fields of c that Update does not take whatever
// the breaker: negative or NaN numbers, rates above 1.
func checkUpdate(c Config) error {
	v := reflect.ValueOf(c)
	t := v.Type()
	for i := range t.NumField() {
		f, name := v.Field(i), t.Field(i).Name
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			if f.Int() < 0 {
				return fmt.Errorf("%s %v is negative", name, f.Interface())
			}
		case reflect.Float64:
			x := f.Float()
			switch {
			case math.IsNaN(x) || math.IsInf(x, 0):
				return fmt.Errorf("%s %v is not a number", name, x)
			case x < 0:
				return fmt.Errorf("%s %v is negative", name, x)
			case x > 1 && name != "Throttle":
				return fmt.Errorf("%s %v is above 1 (rates are fractions: 0.5 for 50%%)", name, x)
			}
		}
	}
	return nil
}

// checkShape refuses a change from cur to next that would change what the
// breaker counts rather than how it judges it.
func checkShape(cur, next Config) error {
	on := func(d time.Duration) bool { return d > 0 }
	switch {
	case next.WindowCalls != cur.WindowCalls || next.WindowPeriod != cur.WindowPeriod:
		return fmt.Errorf("WindowCalls/WindowPeriod %s cannot change live (the breaker has %s): a window's shape is set when the breaker is created", windowName(next), windowName(cur))
	case on(next.SlowCall) != on(cur.SlowCall):
		return errors.New("SlowCall cannot be turned on or off live: slow-call timing is set when the breaker is created")
	case on(next.InFlight) != on(cur.InFlight):
		return errors.New("InFlight cannot be turned on or off live: in-flight timing is set when the breaker is created")
	case next.Concurrency != cur.Concurrency:
		return fmt.Errorf("field Concurrency %d cannot change live (the breaker has %d): the bulkhead is set when the breaker is created", next.Concurrency, cur.Concurrency)
	case next.Throttle != cur.Throttle:
		return fmt.Errorf("field Throttle %g cannot change live (the breaker has %g): the throttle is set when the breaker is created", next.Throttle, cur.Throttle)
	}
	return nil
}

func windowName(c Config) string {
	switch {
	case c.WindowCalls > 0:
		return strconv.Itoa(c.WindowCalls) + " calls"
	case c.WindowPeriod > 0:
		return c.WindowPeriod.String()
	}
	return "none"
}

// reconfigure stores next as the breaker's settings and records the
// Event that says what changed; nothing when nothing did.
func (b *Breaker) reconfigure(next Config) {
	b.mu.Lock()
	cur := b.cfg()
	diff := configDiff(*cur, next)
	if diff == "" {
		b.mu.Unlock()
		return
	}
	b.conf.Store(&next)
	st := State(b.state.Load() & stateMask)
	b.reg.record(Event{Time: b.reg.clock.Now(), Source: next.Name, From: st, To: st,
		Reason: truncate(foldSpace("reconfigured: "+diff), reasonMax)})
	b.mu.Unlock()
	b.reg.flush()
}

// configDiff says what changed from cur to next, in the words of the
// annotation keys: "threshold 5→3, reset 30s→1m0s"; "" for no change.
func configDiff(cur, next Config) string {
	var parts []string
	add := func(key, from, to string) {
		if from != to {
			parts = append(parts, key+" "+from+"→"+to)
		}
	}
	reset := func(c Config) string {
		if c.ResetMax > 0 {
			return c.ResetTimeout.String() + ".." + c.ResetMax.String()
		}
		return c.ResetTimeout.String()
	}
	count := func(n int) string {
		if n == 0 {
			return "none"
		}
		return strconv.Itoa(n)
	}
	add("threshold", count(cur.FailureThreshold), count(next.FailureThreshold))
	add("reset", reset(cur), reset(next))
	add("jitter", percent(cur.ResetJitter), percent(next.ResetJitter))
	add("halfopen", strconv.Itoa(cur.HalfOpenMax), strconv.Itoa(next.HalfOpenMax))
	add("successes", strconv.Itoa(cur.SuccessThreshold), strconv.Itoa(next.SuccessThreshold))
	add("failrate", percent(cur.FailureRate), percent(next.FailureRate))
	add("minimum", strconv.Itoa(cur.MinimumCalls), strconv.Itoa(next.MinimumCalls))
	add("slow", cur.SlowCall.String(), next.SlowCall.String())
	add("slowrate", percent(cur.SlowRate), percent(next.SlowRate))
	add("inflight", cur.InFlight.String(), next.InFlight.String())
	return strings.Join(parts, ", ")
}

// UpdateRateLimit changes the limiter called name while it runs: rate
// tokens per second with the given burst (SPEC §14), the tokens it holds
// cut to the new burst. It is strict like [Registry.Update]: name must be
// a limiter of the registry (a name the annotations and the run-time
// settings left unlimited has none: its routes take no token, and a limit
// for it takes effect when they are created, with [WithRateLimit]), rate
// a positive number and burst at least 1. The breaker of the same name, if
// any, records an [Event] "reconfigured: ratelimit 2/4→5/10".
func (r *Registry) UpdateRateLimit(name string, rate float64, burst int) error {
	where := fmt.Sprintf("breaker: UpdateRateLimit(%q)", name)
	switch {
	case math.IsNaN(rate) || math.IsInf(rate, 0) || rate <= 0:
		return fmt.Errorf("%s: rate %v is not a positive number of tokens per second", where, rate)
	case burst < 1:
		return fmt.Errorf("%s: burst %d is below 1", where, burst)
	}
	r.mu.RLock()
	l, ok := r.limiters[name]
	r.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%s: the registry has no limiter called %q", where, name)
	}
	oldRate, oldBurst := l.set(rate, burst)
	if oldRate == rate && oldBurst == burst {
		return nil
	}
	if b, ok := r.Lookup(name); ok {
		b.mu.Lock()
		st := State(b.state.Load() & stateMask)
		b.reg.record(Event{Time: r.clock.Now(), Source: name, From: st, To: st,
			Reason: "reconfigured: ratelimit " + rateText(oldRate, oldBurst) + "→" + rateText(rate, burst)})
		b.mu.Unlock()
		r.flush()
	}
	return nil
}

func rateText(rate float64, burst int) string {
	if math.IsInf(rate, 1) {
		return "none"
	}
	return strconv.FormatFloat(rate, 'g', -1, 64) + "/" + strconv.Itoa(burst)
}
