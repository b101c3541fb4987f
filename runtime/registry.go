package runtime

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Registry owns named breakers and limiters, the degradation-event log and
// the state-change hooks. Wrappers that name the same breaker on the same
// registry share one [Breaker]. The zero value is not usable: create one
// with [NewRegistry], or use [Default]. A Registry is safe for concurrent
// use.
type Registry struct {
	clock       Clock
	logger      *slog.Logger
	events      *ring
	hooks       []func(Event)
	countCalls  bool
	draw        func() float64 // the throttles' random draws, in [0, 1); see WithRand
	classifiers map[string]classifier
	noEnv       bool
	env, code   map[string]override     // run-time settings: env by envName, code by name
	share       atomic.Pointer[sharing] // the fleet's Sharer (see Registry.Share)
	optWarns    []string                // what options ignored, logged once they are all applied
	recordTo    io.Writer               // WithRecorder's writer, nil when not recording
	rec         *recorder               // the call recorder, nil when not recording (record.go)

	mu       sync.RWMutex // guards breakers, limiters
	updateMu sync.Mutex   // one Update at a time (see Update)
	breakers map[string]*Breaker
	limiters map[string]*Limiter
	families []*Family // guarded by mu (see family.go)

	warned map[string]bool // guarded by mu: settings already warned about

	answers core.Answers // of the chains built on the registry

	qmu      sync.Mutex // guards queue, draining, dropped, reported
	queue    eventQueue // transitions recorded but not yet logged and hooked
	draining bool       // a goroutine is delivering queued events
	dropped  uint64     // events dropped from a full queue, never logged nor hooked
	reported uint64     // the dropped count last warned about
}

// classifier is a [WithClassifier] function.
type classifier = func(ctx context.Context, err error) Outcome

// Option configures a [Registry].
type Option func(*Registry)

// WithClock sets the clock the registry's breakers and limiters read and
// schedule on. Default: the real clock (which testing/synctest fakes inside a
// bubble). A nil clock is ignored.
func WithClock(c Clock) Option {
	return func(r *Registry) {
		if c != nil {
			r.clock = c
		}
	}
}

// WithLogger sets the logger for transitions and warnings. Default:
// slog.Default() at the time of each message. A nil logger is ignored.
func WithLogger(l *slog.Logger) Option {
	return func(r *Registry) {
		if l != nil {
			r.logger = l
		}
	}
}

// WithEventCapacity sets how many events the degradation log keeps.
// Default 100; values below 1 are ignored.
func WithEventCapacity(n int) Option {
	return func(r *Registry) {
		if n >= 1 {
			r.events = newRing(n)
		}
	}
}

// OnStateChange adds a hook called with the Event of every transition of
// every breaker of the registry (bar those dropped from a full queue, see
// [EventQueueCapacity]). A hook may call back into the breaker. Keep
// hooks fast.
//
// Hooks run after the transition, outside every lock, one call at a time
// (never two at once): event after event in the one order in which the
// registry recorded the transitions of all its breakers, which for each
// breaker is its transition order, and for each event every hook in the
// order they were added.
//
// Which goroutine runs them: the goroutine whose call made a transition (a
// Do, Acquire, Release, State, Stats or Health, or a timer's goroutine for
// a move that time made) delivers the queued events itself, its own and
// any queued before it, when no other goroutine is delivering, but at most
// 16 of them; if more are left, it hands them to a goroutine of the
// registry, started then and ended as soon as the queue is empty. When
// another goroutine is delivering, the caller only queues its event and
// returns, and that goroutine runs its hooks. So no caller logs and hooks
// more than 16 events, and a hook that blocks holds up only the goroutine
// running it and the delivery of later events, which queue up to the
// queue's capacity. A nil hook is ignored.
func OnStateChange(hook func(Event)) Option {
	return func(r *Registry) {
		if hook != nil {
			r.hooks = append(r.hooks, hook)
		}
	}
}

// WithClassifier sets how a non-nil error counts for the breaker called
// name: c replaces the default rule (a [context.Canceled] while the caller's
// context is done is ignored, every other error is a failure). c must be
// safe for concurrent use. A family's name sets it for every key's breaker
// ("<family>/<key>"), but a key given a classifier of its own.
//
// A classifier that panics ends the call as a failure, and the panic goes
// on to the caller.
func WithClassifier(name string, c func(ctx context.Context, err error) Outcome) Option {
	return func(r *Registry) {
		if c != nil {
			r.classifiers[name] = c
		}
	}
}

// WithCallCounts turns on exact counting of every call: Stats.Calls,
// Successes and LastSuccess. It is off by default because it
// costs the hot paths one shared atomic write per call (and a clock read per
// success), which stops the CLOSED success path from scaling across cores:
// see runtime/breakerimpl's BenchmarkRouteSuccessParallel and its Counted
// twin. Failures, rejections, state changes, consecutive counts and
// failure and transition times are always exact.
func WithCallCounts() Option {
	return func(r *Registry) { r.countCalls = true }
}

// NewRegistry returns an empty registry. It reads the BREAKER_<NAME>_*
// environment variables now (unless [WithoutEnv]): THRESHOLD, RESET (a Go
// duration or seconds, or D..MAX to back off, see Config.ResetMax),
// JITTER (20% or 0.2), HALFOPEN, SUCCESSES, RATELIMIT (R/B), WINDOW (100
// calls or 60s), FAILRATE and SLOWRATE (50% or 0.5), MINIMUM, SLOW and
// INFLIGHT (a Go duration or seconds), CONCURRENCY and THROTTLE (K >= 1),
// and MODE (isolate or bypass: the breaker starts in that operator's mode,
// in this process only; see [Breaker.Isolate]), where NAME is the breaker's name in upper case, with '.', '-' and ':' as
// '_'. A malformed value or an unknown key is logged once as a warning
// naming the variable, and the lower layer's value stays.
func NewRegistry(opts ...Option) *Registry {
	r := &Registry{
		clock:       realClock{},
		draw:        rand.Float64,
		events:      newRing(DefaultEventCapacity),
		queue:       newEventQueue(EventQueueCapacity),
		classifiers: map[string]classifier{},
		breakers:    map[string]*Breaker{},
		limiters:    map[string]*Limiter{},
		warned:      map[string]bool{},
		env:         map[string]override{},
		code:        map[string]override{},
	}
	for _, o := range opts {
		if o != nil {
			o(r)
		}
	}
	for _, w := range r.optWarns { // after the options: WithLogger may come last
		r.log().Warn(w)
	}
	r.optWarns = nil
	if !r.noEnv {
		r.readEnv(environ())
	}
	r.startRecorder()
	return r
}

var defaultRegistry = sync.OnceValue(func() *Registry { return NewRegistry() })

// Default returns the process-wide registry, which generated constructors
// use when given a nil registry.
func Default() *Registry { return defaultRegistry() }

// Breaker returns the breaker called cfg.Name, creating it with cfg if it
// does not exist yet; run-time settings ([WithConfig], BREAKER_* variables)
// override cfg's fields. The first configuration of a name wins: a later call
// with a different one gets the existing breaker and logs a warning once per
// differing configuration.
func (r *Registry) Breaker(cfg Config) *Breaker {
	return r.breaker(r.settings(cfg, 0, 0).cfg)
}

// breaker returns the breaker called cfg.Name, creating it with cfg, final
// settings, if it does not exist yet; see [Registry.Breaker].
func (r *Registry) breaker(cfg Config) *Breaker { return r.breakerIn(cfg, nil, nil, nil) }

// classifierLocked returns the classifier of the breaker called name: its
// own, or for a family's key ("<family>/<key>") its family's; r.mu held.
func (r *Registry) classifierLocked(name string) classifier {
	if c := r.classifiers[name]; c != nil {
		return c
	}
	if fam := r.keyFamilyLocked(name); fam != "" {
		return r.classifiers[fam]
	}
	return nil
}

// keyFamilyLocked returns the name of the family whose key's breaker name
// ("<family>/<key>") is, the longest when family names nest (a family made
// in code may have a "/" in its name); "" for none. r.mu held.
func (r *Registry) keyFamilyLocked(name string) string {
	best := ""
	for _, f := range r.families {
		if len(f.name) > len(best) && strings.HasPrefix(name, f.name+"/") {
			best = f.name
		}
	}
	return best
}

// breakerIn is breaker, making a new breaker in room when room is not nil
// (a zero Breaker never used, see [core.KeyMaker]), with its state and
// fails words in words when that is not nil (a family key's cell). The
// breaker it returns is room only when it made it there, and uses words
// only when it made it.
func (r *Registry) breakerIn(cfg Config, room *Breaker, words *core.Words, fam *Family) *Breaker {
	r.mu.RLock()
	b, ok := r.breakers[cfg.Name]
	r.mu.RUnlock()
	if !ok {
		r.mu.Lock()
		b, ok = r.breakers[cfg.Name]
		if !ok {
			b = newBreakerIn(room, words, r, cfg, r.classifierLocked(cfg.Name))
			b.joining = fam // no other goroutine has b yet
			b.keyed.Store(fam != nil)
			if o := r.env[envName(cfg.Name)]; o.mode.isMode() { // BREAKER_<NAME>_MODE
				b.mu.Lock()
				b.setModeLocked(o.mode, operatorReason(o.mode, o.modeVar))
				b.envMode.Store(true)
				b.mu.Unlock()
			}
			r.breakers[cfg.Name] = b
		}
		r.mu.Unlock()
		if !ok {
			if words == nil && !cfg.windowed() { // a family key's: its family's warned of when it was made, its own by keyConfig
				r.warnWindowless(cfg.Name)
			}
			r.flush()
			r.created(b)
		}
	}
	if ok && *b.cfg() != cfg && r.warnOnce("breaker", fmt.Sprintf("%+v", cfg)) {
		r.log().Warn(fmt.Sprintf("breaker[%s] already exists with other settings; keeping the first", cfg.Name),
			"breaker", cfg.Name, "kept", fmt.Sprintf("%+v", *b.cfg()), "ignored", fmt.Sprintf("%+v", cfg))
	}
	return b
}

// attach returns the breaker named by cfg and, when the settings give it a
// rate limit, its limiter (else nil), creating them if needed: what a
// generated route goes through, with its settings resolved once.
func (r *Registry) attach(cfg Config, rate float64, burst int) (*Breaker, *Limiter) {
	if cfg.Name == "fallback:" && r.warnOnce("fallback", "") {
		// A Fallback without a Name: every nameless one shares a breaker.
		r.log().Warn(`breaker: a runtime.Fallback without a Name goes through breaker "fallback:", which every nameless fallback shares; give each its Name`)
	}
	s := r.settings(cfg, rate, burst)
	b := r.breaker(s.cfg)
	if !s.limited() {
		return b, nil
	}
	return b, r.limiter(s.cfg.Name, s.rate, s.burst)
}

// Clock returns the registry's clock (see [WithClock]).
func (r *Registry) Clock() Clock { return r.clock }

// Lookup returns the breaker called name, if it exists.
func (r *Registry) Lookup(name string) (*Breaker, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	b, ok := r.breakers[name]
	return b, ok
}

// Breakers returns every breaker of the registry, in name order.
func (r *Registry) Breakers() []*Breaker {
	r.mu.RLock()
	out := make([]*Breaker, 0, len(r.breakers))
	for _, b := range r.breakers {
		out = append(out, b)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Breaker) int { return cmp.Compare(a.cfg().Name, b.cfg().Name) })
	return out
}

// Limiter returns the limiter called name, creating it with rate tokens per
// second and the given burst if it does not exist yet ([WithRateLimit] and
// BREAKER_<NAME>_RATELIMIT override them). The first settings
// win, as for [Registry.Breaker]. A rate of 0 means no limit; a burst
// below 1 is 1. A rate that is NaN or negative means no limit too, and is
// logged once as a warning. An empty name is "default", as a Config's.
func (r *Registry) Limiter(name string, rate float64, burst int) *Limiter {
	name = cmp.Or(name, "default")
	r.warnRate("Limiter", name, rate)
	s := r.settingsOf(name, Config{Name: name}, rate, burst)
	return r.limiter(name, s.rate, s.burst)
}

// warnRate warns, once a name, of a rate given in code that is no number
// of tokens a second (NaN, or negative): it means no limit, as 0 does,
// and a typo or a bad computation must not pass without a word.
func (r *Registry) warnRate(where, name string, rate float64) {
	if (math.IsNaN(rate) || rate < 0) && r.warnOnce("rate", where+" "+name) {
		r.log().Warn(fmt.Sprintf("breaker: %s(%q): rate %v is not a number of tokens a second; no limiter (0 says none)", where, name, rate),
			"breaker", name, "rate", rate)
	}
}

// limiter returns the limiter called name, creating it with rate and
// burst, final settings, if it does not exist yet; see [Registry.Limiter].
func (r *Registry) limiter(name string, rate float64, burst int) *Limiter {
	r.mu.RLock()
	l, ok := r.limiters[name]
	r.mu.RUnlock()
	if !ok {
		r.mu.Lock()
		l, ok = r.limiters[name]
		if !ok {
			l = newLimiter(name, r.clock, rate, burst)
			l.reg = r
			r.limiters[name] = l
		}
		r.mu.Unlock()
	}
	if ok {
		if lr, lb := l.Rate(); (rate != lr || burst != lb) &&
			r.warnOnce("limiter", fmt.Sprintf("%s %g/%d", name, rate, burst)) {
			r.log().Warn(fmt.Sprintf("limiter[%s] already exists with other settings; keeping the first", name),
				"limiter", name, "kept", fmt.Sprintf("%g/%d", lr, lb), "ignored", fmt.Sprintf("%g/%d", rate, burst))
		}
	}
	return l
}

// Events returns up to limit events of the degradation log, newest first.
// A limit <= 0 means 50; the limit is capped at the log's capacity.
func (r *Registry) Events(limit int) []Event {
	if limit <= 0 {
		limit = defaultEventLimit
	}
	return r.events.newest(limit)
}

// ResetAll resets every breaker (see [Breaker.Reset]); it records no events.
func (r *Registry) ResetAll() {
	for _, b := range r.Breakers() {
		b.Reset()
	}
}

// warnOnce reports whether the conflicting settings key of kind have not been
// warned about yet, and marks them.
func (r *Registry) warnOnce(kind, key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := kind + " " + key
	if r.warned[k] {
		return false
	}
	r.warned[k] = true
	return true
}

func (r *Registry) log() *slog.Logger {
	if r.logger != nil {
		return r.logger
	}
	return slog.Default()
}

// record adds an event to the log and queues it for flush, ready to be
// delivered. The two happen under qmu, so that the hooks run in the log's
// order across every breaker of the registry. A full queue drops its
// oldest event (see [EventQueueCapacity]).
func (r *Registry) record(ev Event) {
	r.reserve(ev, true)
}

// reserve is record for a transition whose new state is not stored yet:
// ev waits in the queue, and holds up the events behind it, until
// [Registry.ready] is called with the number it returns. It stamps ev's
// Time under qmu and returns it: a time read before the lock could be
// older than that of an event logged ahead of it by a goroutine that
// overtook this one, and the log, newest first, would disagree with its
// times (TestEventTimesFollowTheLog).
func (r *Registry) reserve(ev Event, ready bool) (uint64, time.Time) {
	r.qmu.Lock()
	ev.Time = r.clock.Now()
	r.events.add(ev)
	n, dropped := r.queue.push(ev, ready)
	if dropped {
		r.dropped++
	}
	r.qmu.Unlock()
	return n, ev.Time
}

// logOnly adds ev to the log alone (no hooks: nothing changed), stamped
// under qmu as reserve stamps transitions.
func (r *Registry) logOnly(ev Event) {
	r.qmu.Lock()
	ev.Time = r.clock.Now()
	r.events.add(ev)
	r.qmu.Unlock()
}

// ready lets the event reserve numbered n be delivered: its transition's
// state is stored. Its breaker's caller flushes after.
func (r *Registry) ready(n uint64) {
	r.qmu.Lock()
	r.queue.ready(n)
	r.qmu.Unlock()
}

// drainBudget is how many queued events a caller's flush delivers at most
// before it hands the rest to a goroutine of the registry.
const drainBudget = 16

// flush logs queued events and runs the hooks, outside every lock and in
// order. Whoever finds nobody delivering delivers: at most drainBudget
// events on the caller's goroutine, then, if some are left, on a goroutine
// started for them that ends when the queue is empty. A transition made by
// a hook is queued and delivered by the same loop after the hook returns.
func (r *Registry) flush() {
	r.qmu.Lock()
	if r.draining || r.queue.len() == 0 || !r.queue.headReady() {
		r.qmu.Unlock()
		return
	}
	r.draining = true
	r.qmu.Unlock()
	if !r.deliver(drainBudget) {
		go r.deliver(-1)
	}
}

// deliver logs and hooks queued events, at most budget of them (no limit
// when budget < 0), as the one goroutine delivering. It reports whether it
// emptied the queue, and then is no longer delivering; otherwise it still
// is, and its caller must hand the rest on.
func (r *Registry) deliver(budget int) bool {
	for {
		r.qmu.Lock()
		if r.queue.len() == 0 {
			r.draining = false
			lost := r.dropped - r.reported
			r.reported = r.dropped
			r.qmu.Unlock()
			if lost > 0 {
				logSafely(func() {
					r.log().Warn(fmt.Sprintf("breaker events: %d events (state changes, reconfigurations) dropped from the full event queue, not logged nor hooked; Registry.Events has them", lost),
						"dropped", lost)
				})
			}
			return true
		}
		if !r.queue.headReady() {
			// A transition recorded it and is storing its state: its
			// caller flushes next, and delivers it and what follows.
			r.draining = false
			r.qmu.Unlock()
			return true
		}
		if budget == 0 {
			r.qmu.Unlock()
			return false
		}
		budget--
		ev := r.queue.pop()
		r.qmu.Unlock()
		logSafely(func() {
			r.log().Info(fmt.Sprintf("breaker[%s] %s → %s", ev.Source, ev.From, ev.To),
				"breaker", ev.Source, "from", ev.From.String(), "to", ev.To.String(), "reason", ev.Reason)
		})
		for _, h := range r.hooks {
			r.runHook(h, ev)
		}
	}
}

// DroppedEvents returns how many transitions were dropped from the full
// event queue (see [EventQueueCapacity]) since the registry was made:
// their log lines and hook calls were skipped.
func (r *Registry) DroppedEvents() uint64 {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	return r.dropped
}

// runHook runs one hook; a panicking hook is logged and does not stop the
// others or the breaker.
func (r *Registry) runHook(h func(Event), ev Event) {
	defer func() {
		if v := recover(); v != nil {
			r.log().Error(fmt.Sprintf("breaker[%s] state-change hook panicked: %v", ev.Source, v), "breaker", ev.Source)
		}
	}()
	h(ev)
}

// logSafely makes one log call of the delivery: a panicking slog handler
// loses that line but stops neither the delivery (which would stay marked
// as running, so no hook would run again) nor, on the registry's backlog
// goroutine, the process.
func logSafely(log func()) {
	defer func() { _ = recover() }()
	log()
}
