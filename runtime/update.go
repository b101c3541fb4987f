package runtime

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Live settings (SPEC §14). A breaker's settings are one Config value
// behind an atomic pointer (Breaker.conf): Update builds the next value,
// with the same layering as creation (a field given replaces the current
// one, Config.Off turns one off) and the same defaults, and stores it
// whole, so that every reader sees one Config or the other, never a mix.
//
// What the breaker counts keeps its meaning where the trip rule keeps its
// shape: a new threshold, rate, minimum, reset or slow-call limit judges
// the counts already there. A change of a window's shape starts them
// fresh: a window where there was none, or another one, or none
// (WindowCalls, WindowPeriod), slow-call or in-flight timing turned on or
// off (SlowCall, InFlight), gives the breaker a new window object, empty.
// In CLOSED and BYPASSED it also starts a new counting period (as a
// transition does, without one: the state, the events and the consecutive
// failures stay), so that a call admitted before it and still in flight
// counts in Stats but not towards tripping: its outcome belongs to counts
// that are gone, and the new window does not time it. In OPEN, HALF_OPEN
// and ISOLATED the window is empty anyway and the new shape applies from
// the next period.
//
// A bulkhead or a throttle turned on or off applies to the calls admitted
// from then on (in HALF_OPEN, from the next period): a call's admission
// word says whether it takes a slot and feeds the throttle, so that the
// calls in flight give back what they took. A new Concurrency limit
// applies to new admissions at once: calls holding a slot keep it (a
// lowered limit lets them finish), and a raised one hands the new slots
// to the calls queued. The bulkhead stays once made (unlimited while
// Concurrency is off); a throttle turned off goes, its window's counts
// with it, but not its count of refusals (Stats.Throttled is a total). A
// new Throttle K judges the throttle's counts at once. The one case in
// which a bulkhead made live could be handed back slots it never lent (a
// throttle's calls in flight, which carry LoadFlag) starts a new period
// as a window's change does.
//
// Generated routes keep, from when they were made, a short cut to a
// bulkhead's slots, and admit the calls of a time window on their fast
// path (see breakerimpl.Route). A change of shape of a breaker that had a
// bulkhead at creation sets countFlag in its state words for good (every
// call then takes the general path, which reads the current bulkhead) and
// Routed on the slots; so does one that gives calls timing (SlowCall,
// InFlight) to a breaker that ever had a lock-free time window, since
// timed calls need the admission those routes skip. A time window made
// live counts successes without the lock as one made at creation does:
// routes reach its counter through a pointer that Update swaps
// (Breaker.fast).

// Update changes the settings of live breakers, each cfg naming one by its
// Name, while they run: a field that is not zero replaces the breaker's
// current value, a zero field keeps it (as [WithConfig] layers), and the
// bits of Config.Off turn settings off.
//
// Every cfg is checked first, and nothing changes if one is wrong; the
// error names the Config (its index and Name) and the field. Update is
// strict where creation is lenient, so that an operator's typo cannot pass
// silently: a negative or NaN field, a rate (FailureRate, SlowRate,
// ResetJitter) above 1, a window below the smallest (10 calls, 1s) or
// both kinds at once, a rate or a minimum or SlowCall without a window, a
// MinimumCalls above a count window's size, a SlowRate without SlowCall, a
// Throttle below 1, a ResetMax below the ResetTimeout it would apply to,
// a ResetTimeout moved to or past the breaker's ResetMax without a new
// ResetMax or Off SettingBackoff (backoff would go unsaid), an Off bit
// beside the field it turns off, fault injection (set when the
// breaker is created) and a Name the registry has no breaker of are
// errors. Two Configs of one name apply in order, and Updates made at
// once apply one after the other, each to the settings the other left.
//
// A breaker keeps its state: an OPEN breaker keeps its window (a new
// ResetTimeout applies from its next OPEN period), and a CLOSED one keeps
// its consecutive failures, judged by the new threshold from the next
// outcome on (one that is already past a lowered threshold trips at its
// next failure). Its window's counts stay when the window keeps its
// shape (judged by the new rates and minimum) and start fresh when the
// shape changes; see the comment at the top of update.go for what a
// change of shape does to calls in flight, to a bulkhead and to a
// throttle. Each breaker whose settings changed records one [Event] whose
// From and To are both its current state (the one Event that is not a
// transition), reason "reconfigured: threshold 5→3, window 100→1m0s" in
// the words of the annotation keys, and the hooks are called with it.
// Rate limits change live with [Registry.UpdateRateLimit].
//
// A Name may be a [Family]'s: the Config then applies to the breaker of
// every live key of the family (each records its Event) and to the keys
// made later (their breakers start with the family's new settings), but
// for the fields a key's own settings give (WithConfig or BREAKER_* of
// "<family>/<key>"), which win over the family's, live or made later. A
// key's own name changes that key's breaker alone, for as long as it
// lives and until an Update of its family gives a field its own settings
// give: a key dropped and made again starts from the family's settings
// and its own. When a name is both a breaker's and a family's, both
// change.
func (r *Registry) Update(cfgs ...Config) error {
	// One Update at a time: each layers its fields on the settings as it
	// reads them and stores the whole result, so two at once would each
	// store the other's fields as they were before it, and one operator's
	// change would be undone without a word. The events are delivered
	// (hooks run) once the lock is let go, so that a hook may Update.
	r.updateMu.Lock()
	defer r.flush()
	defer r.updateMu.Unlock()
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
				for _, kb := range f.liveBreakers() {
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
				j := pending[kb]
				changes[j].next = f.ownOver(kb.Name(), changes[j].next)
			}
		}
	}
	for _, fc := range fams {
		// Keys made since the check took the family's old settings: they
		// take the same steps, from theirs.
		for _, kb := range fc.f.reconfigure(fc.next, fc.steps) {
			if fc.seen[kb] {
				continue
			}
			next := *kb.cfg()
			for _, c := range fc.steps {
				if n, err := layer(next, c); err == nil {
					next = n
				}
			}
			changes = append(changes, change{b: kb, next: fc.f.ownOver(kb.Name(), next)})
		}
	}
	for _, c := range changes {
		c.b.reconfigure(c.next)
	}
	return nil
}

// layer returns cur with the fields of c that are not zero, defaults
// applied, Name kept; an error when the result needs what it has not.
func layer(cur, c Config) (Config, error) {
	next := override{cfg: c}.apply(cur)
	next.Name = cur.Name
	if err := checkNext(c, next); err != nil {
		return cur, err
	}
	if c.ResetTimeout > 0 && c.ResetMax == 0 && next.ResetMax > 0 && next.ResetMax <= next.ResetTimeout {
		// The backoff's cap would go without a word (withDefaults drops a
		// ResetMax not above the reset): the operator says so, or raises it.
		return cur, fmt.Errorf("ResetTimeout %s is not below the backoff's cap ResetMax %s, which would turn backoff off: give a ResetMax above it, or Off: SettingBackoff", c.ResetTimeout, next.ResetMax)
	}
	next = next.withDefaults()
	if c.ResetMax > 0 && next.ResetMax == 0 {
		return cur, fmt.Errorf("ResetMax %s is not above ResetTimeout %s", c.ResetMax, next.ResetTimeout)
	}
	return next, nil
}

// checkUpdate refuses the fields of c that Update does not take whatever
// the breaker: negative or NaN numbers, rates above 1, a window below the
// smallest or of both kinds, a Throttle below 1, an Off bit beside its
// field, fault injection.
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
	switch {
	case c.ResetTimeout > MaxCooldown:
		return fmt.Errorf("ResetTimeout %s is above %s, the longest OPEN period (MaxCooldown)", c.ResetTimeout, MaxCooldown)
	case c.ResetMax > MaxCooldown:
		return fmt.Errorf("ResetMax %s is above %s, the longest OPEN period (MaxCooldown)", c.ResetMax, MaxCooldown)
	case c.WindowCalls > 0 && c.WindowPeriod > 0:
		return fmt.Errorf("WindowCalls %d and WindowPeriod %s are both set: a window counts calls or time, not both", c.WindowCalls, c.WindowPeriod)
	case c.WindowCalls > 0 && c.WindowCalls < minWindowCalls:
		return fmt.Errorf("WindowCalls %d is below %d", c.WindowCalls, minWindowCalls)
	case c.WindowCalls > maxWindowCalls:
		return fmt.Errorf("WindowCalls %d is above %d", c.WindowCalls, maxWindowCalls)
	case c.WindowPeriod > 0 && c.WindowPeriod < minWindowPeriod:
		return fmt.Errorf("WindowPeriod %s is below %s", c.WindowPeriod, minWindowPeriod)
	case c.Throttle > 0 && c.Throttle < 1:
		return fmt.Errorf("field Throttle %g is below 1", c.Throttle)
	case c.Fault > 0 || c.Latency > 0 || c.LatencyRate > 0:
		return errors.New("fields Fault, Latency and LatencyRate cannot change live: fault injection is set when the breaker is created")
	case c.Off >= 1<<len(settingNames):
		return fmt.Errorf("field Off %s names no setting", c.Off&^(1<<len(settingNames)-1))
	}
	if both := c.Off & given(c); both != 0 {
		return fmt.Errorf("field Off %s turns off what the same Config sets", both)
	}
	return nil
}

// checkNext refuses the settings next, which c made of the breaker's,
// when they need a window next has not, or turn off a threshold that is
// all the breaker trips on.
func checkNext(c, next Config) error {
	if next.windowed() {
		switch {
		case c.MinimumCalls > 0 && next.WindowCalls > 0 && c.MinimumCalls > next.WindowCalls:
			return fmt.Errorf("MinimumCalls %d is above the window's %d calls, which could never hold that many", c.MinimumCalls, next.WindowCalls)
		case c.SlowRate > 0 && next.SlowCall == 0:
			return fmt.Errorf("SlowRate %v needs SlowCall, the duration past which a call is slow", c.SlowRate)
		}
		return nil
	}
	switch {
	case c.FailureRate > 0:
		return fmt.Errorf("FailureRate %v needs a window (WindowCalls or WindowPeriod)", c.FailureRate)
	case c.MinimumCalls > 0:
		return fmt.Errorf("MinimumCalls %d needs a window (WindowCalls or WindowPeriod)", c.MinimumCalls)
	case c.SlowCall > 0:
		return fmt.Errorf("SlowCall %s needs a window (WindowCalls or WindowPeriod)", c.SlowCall)
	case c.SlowRate > 0:
		return fmt.Errorf("SlowRate %v needs a window (WindowCalls or WindowPeriod)", c.SlowRate)
	case c.Off&SettingThreshold != 0:
		return errors.New("field Off threshold needs a window (WindowCalls or WindowPeriod): without one the threshold is all the breaker trips on")
	}
	return nil
}

func windowName(c Config) string {
	switch {
	case c.WindowCalls > 0:
		return strconv.Itoa(c.WindowCalls)
	case c.WindowPeriod > 0:
		return c.WindowPeriod.String()
	}
	return "none"
}

// reshapeLocked gives the breaker, whose settings were cur and are now
// next (b.conf holds next), the window, bulkhead and throttle next calls
// for; b.mu is held. See the comment at the top of update.go.
func (b *Breaker) reshapeLocked(cur, next Config) {
	if h := b.bulkhead.Load(); h != nil && next.Concurrency != cur.Concurrency {
		h.setLimit(next.Name, next.Concurrency)
	}
	if t := b.throttle.Load(); t != nil && next.Throttle > 0 {
		t.setK(next.Throttle)
	}
	reshaped := next.WindowCalls != cur.WindowCalls || next.WindowPeriod != cur.WindowPeriod ||
		(next.SlowCall > 0) != (cur.SlowCall > 0) || (next.InFlight > 0) != (cur.InFlight > 0)
	load := (next.Concurrency > 0) != (cur.Concurrency > 0) || (next.Throttle > 0) != (cur.Throttle > 0)
	if !reshaped && !load {
		return
	}
	// Routes that took a time window's short cut admit a WindowFlag word
	// without Admit: a window whose calls are timed needs it.
	timed := reshaped && (next.SlowCall > 0 || next.InFlight > 0)
	if (b.fastRoutes && timed) || b.core.Slots != nil {
		b.flags |= countFlag // routes' short cuts are of the old shape
		if b.core.Slots != nil {
			b.core.Slots.Routed.Store(true)
		}
	}
	s := b.state.Load()
	st := State(s & stateMask)
	// since: the first period of the new shape, the next one. In CLOSED
	// and BYPASSED, whose calls count, a new window starts it now.
	since := period(s) + 1
	if since == 0 {
		since = 1 // no period is 0
	}
	live := st == Closed || st == Bypassed
	// slotless: calls of this period may carry LoadFlag (for a throttle)
	// without a bulkhead to take a slot of; one made now must not take
	// back the slots they never took.
	slotless := (b.flags|s)&core.LoadFlag != 0 && next.Concurrency > 0 && b.bulkhead.Load() == nil
	bump := live && (reshaped || slotless)
	if reshaped {
		var win *window
		if next.windowed() || next.InFlight > 0 {
			var clock Clock
			if b.stamps.mono {
				clock = b.reg.clock // as at creation: lock-free counts, an unordered tracker
			}
			win = newWindow(&b.conf, clock)
			win.mu.Lock()
			win.resetLocked(since)
			win.mu.Unlock()
		}
		b.winSince.Store(since) // before the window: see beforeWindow
		b.win.Store(win)
		// After the window: a success that finds the new count there is
		// of the new period (the old one's words publish nothing in it).
		b.setFastLocked(win)
	} else if win := b.win.Load(); win != nil && bump {
		win.mu.Lock()
		win.resetLocked(since) // the new period's: its counts start fresh
		win.mu.Unlock()
	}
	if next.Concurrency > 0 && b.bulkhead.Load() == nil {
		if slotless {
			b.slotsSince.Store(since) // before the bulkhead: see holdsSlot
		}
		b.bulkhead.Store(newBulkhead(next.Name, next.Concurrency))
	}
	switch {
	case next.Throttle == 0:
		if t := b.throttle.Swap(nil); t != nil {
			b.throttledBefore.Add(t.throttled.Load()) // its refusals stay in the total
		}
	case b.throttle.Load() == nil:
		b.throttle.Store(newThrottle(next.Name, next.Throttle, &b.stamps, b.reg.clock))
	}
	b.loadFlagsLocked()
	switch {
	case bump:
		word := s&^0xffffffff + periodOne
		if period(word) == 0 {
			word += periodOne
		}
		word |= b.closedFlags() | uint64(st)
		consecutive := uint64(0)
		if f := b.fails.Load(); period(f) == period(s) {
			consecutive = uint64(uint32(f))
		}
		b.fails.Store(word&^0xffffffff | consecutive)
		b.probes.Store(word &^ 0xffffffff)
		b.state.Store(word)
	case live:
		// The same period with the new flags: calls admitted before
		// keep theirs, and hold no slot unless they carry LoadFlag.
		for {
			s := b.state.Load()
			want := s&^(core.LoadFlag|countFlag) | b.flags&(core.LoadFlag|countFlag)
			if want == s || b.state.CompareAndSwap(s, want) {
				break
			}
		}
	}
	// Otherwise the next period's word takes the flags.
}

// beforeWindow reports whether the admission w was made in a state period
// before the breaker's window was put in place by Update, so that the
// window does not time it; 0 is the window of the breaker's creation.
func (b *Breaker) beforeWindow(w uint64) bool {
	since := b.winSince.Load()
	return since != 0 && int32(period(w)-since) < 0
}

// holdsSlot reports whether the admission w, a word with LoadFlag, takes
// (and so gives back) a slot of the breaker's bulkhead: false for one
// made before Update gave the breaker a bulkhead.
func (b *Breaker) holdsSlot(w uint64) bool {
	since := b.slotsSince.Load()
	return since == 0 || int32(period(w)-since) >= 0
}

// reconfigure stores next as the breaker's settings and records the
// Event that says what changed; nothing when nothing did. Under the
// registry's updateMu.
func (b *Breaker) reconfigure(next Config) {
	b.mu.Lock()
	cur := b.cfg()
	diff := configDiff(*cur, next)
	if diff == "" {
		b.mu.Unlock()
		return
	}
	b.conf.Store(&next)
	b.reshapeLocked(*cur, next)
	st := State(b.state.Load() & stateMask)
	b.reg.record(Event{Time: b.reg.clock.Now(), Source: next.Name, From: st, To: st,
		Reason: truncate(foldSpace("reconfigured: "+diff), reasonMax)})
	b.mu.Unlock()
	// Update delivers the event (flush) once it has let go of updateMu.
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
	rate := func(f float64) string {
		if f == 0 {
			return "none"
		}
		return percent(f)
	}
	duration := func(d time.Duration) string {
		if d == 0 {
			return "none"
		}
		return d.String()
	}
	throttleName := func(k float64) string {
		if k == 0 {
			return "none"
		}
		return strconv.FormatFloat(k, 'g', -1, 64)
	}
	// rates says a change of a fraction, in percent to the tenth as the
	// reasons have them, or exactly when that would hide it (50%→50.04%).
	rates := func(key string, from, to float64, name func(float64) string) {
		if from == to {
			return
		}
		f, t := name(from), name(to)
		for digits := 2; f == t && digits <= 12; digits++ {
			exact := func(x float64) string {
				return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(x*100, 'f', digits, 64), "0"), ".") + "%"
			}
			f, t = exact(from), exact(to)
		}
		add(key, f, t)
	}
	add("threshold", count(cur.FailureThreshold), count(next.FailureThreshold))
	add("reset", reset(cur), reset(next))
	rates("jitter", cur.ResetJitter, next.ResetJitter, percent)
	add("halfopen", strconv.Itoa(cur.HalfOpenMax), strconv.Itoa(next.HalfOpenMax))
	add("successes", strconv.Itoa(cur.SuccessThreshold), strconv.Itoa(next.SuccessThreshold))
	add("window", windowName(cur), windowName(next))
	rates("failrate", cur.FailureRate, next.FailureRate, rate)
	add("minimum", count(cur.MinimumCalls), count(next.MinimumCalls))
	add("slow", duration(cur.SlowCall), duration(next.SlowCall))
	rates("slowrate", cur.SlowRate, next.SlowRate, rate)
	add("inflight", duration(cur.InFlight), duration(next.InFlight))
	add("concurrency", count(cur.Concurrency), count(next.Concurrency))
	add("throttle", throttleName(cur.Throttle), throttleName(next.Throttle))
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
		return fmt.Errorf("%s: the registry has no limiter called %q: a name left unlimited gets one only when its routes are made (ratelimit= in the annotation, WithRateLimit or BREAKER_%s_RATELIMIT, then a restart)", where, name, envName(name))
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
