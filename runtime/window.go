package runtime

import (
	"fmt"
	"math"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Trip conditions over a window (SPEC §8): a failure rate and a slow-call
// rate over the last N calls or the last D, and calls that stay in flight
// too long.
//
// Cost. A count window reads no clock. While it is full and holds no
// failure (it is "clean") the state word's WindowFlag is clear and a success
// takes the plain CLOSED path: it cannot change a clean full window, so it
// is not recorded, and the path takes no lock, allocates nothing and
// scales across cores. A failure sets the flag, and from then on every call
// is recorded, under the window's lock, until N successes in a row have
// pushed the last failure out. A time window on the real clock counts a
// success without the lock or a clock read while it has published a
// bucket (see publishLocked and core.Window); other calls take the lock
// and read the clock once when they end. SlowCall and InFlight
// time every call: a clock read when the call is admitted and one when it
// ends, and a slot in the tracker (see tracker), no lock; a success that
// is not slow then takes no lock either while a count window is clean
// (clean) or a time window has published a bucket.
//
// Accuracy under concurrency. A call admitted while the count window was
// clean and ending just after a failure made it dirty is not recorded: the
// window then under-counts successes by the calls in flight at that moment,
// for one window's length at most. Sequential calls are counted exactly.

const (
	minWindowCalls      = 10
	maxWindowCalls      = 1 << 20
	minWindowPeriod     = time.Second
	defaultMinimumCalls = 20
	defaultRate         = 0.5

	// windowBuckets is how many buckets of D/10 a time window sums: the
	// current one and the ten before it, so that an ended call is
	// forgotten between D and D + D/10 after it ended.
	windowBuckets = core.Buckets

	// publishMargin is the part of a bucket, at its end, during which no
	// bucket is published for the lock-free success path (see
	// window.publishLocked): the timer that withdraws the bucket fires at
	// 1 - 1/publishMargin of it, and may be as late as that before a
	// success could be counted in the bucket before its own.
	publishMargin = 32

	// maxTracked is how many calls in flight a breaker times at most
	// (SlowCall, InFlight). Past it, the oldest is forgotten: its outcome
	// is then ignored (see tracker.claimLocked).
	maxTracked = 1 << 16

	windowFlag = core.WindowFlag
	idMask     = probeMask >> probeShift // the tracking id of a CLOSED admission
)

// windowed reports whether c turns on rate-based tripping.
func (c Config) windowed() bool { return c.WindowCalls > 0 || c.WindowPeriod > 0 }

// windowDefaults applies the rules of the window settings to c (see
// [Config]): a window below the smallest is raised to it, a count window
// beats a time window when both are set, the rates and the minimum take
// their defaults, and the settings that need a window are cleared without
// one.
func (c Config) windowDefaults() Config {
	c.WindowCalls = max(c.WindowCalls, 0)
	c.WindowPeriod = max(c.WindowPeriod, 0)
	c.InFlight = max(c.InFlight, 0)
	switch {
	case c.WindowCalls > 0:
		c.WindowCalls = min(max(c.WindowCalls, minWindowCalls), maxWindowCalls)
		c.WindowPeriod = 0
	case c.WindowPeriod > 0:
		c.WindowPeriod = max(c.WindowPeriod, minWindowPeriod)
	default:
		c.FailureRate, c.MinimumCalls, c.SlowCall, c.SlowRate = 0, 0, 0, 0
		return c
	}
	c.FailureRate = rateOrDefault(c.FailureRate)
	if c.MinimumCalls <= 0 {
		c.MinimumCalls = defaultMinimumCalls
	}
	if c.WindowCalls > 0 {
		c.MinimumCalls = min(c.MinimumCalls, c.WindowCalls)
	}
	c.SlowCall = max(c.SlowCall, 0)
	if c.SlowCall > 0 {
		c.SlowRate = rateOrDefault(c.SlowRate)
	} else {
		c.SlowRate = 0
	}
	return c
}

// rateOrDefault returns r, or the default 0.5 for zero, a negative number
// or NaN, or 1 for more than 1.
func rateOrDefault(r float64) float64 {
	switch {
	case !(r > 0):
		return defaultRate
	case r > 1:
		return 1
	}
	return r
}

// The outcome bits a window keeps per call.
const (
	failedBit uint8 = 1
	slowBit   uint8 = 2
)

// window is what a breaker with a window, SlowCall or InFlight keeps: the
// outcomes of the calls admitted in CLOSED in the current state period, and
// the calls in flight being timed. It is created with the breaker, and
// replaced whole when Registry.Update changes its shape (see update.go).
type window struct {
	conf      *atomic.Pointer[Config] // the breaker's settings
	counting  bool                    // a count or time window
	width     int64                   // time window: nanoseconds per bucket; 0 for a count window
	tracking  bool                    // SlowCall or InFlight: every call is timed
	cleanable bool                    // a count window: a clean one needs no record (see clean, syncWindowFlagLocked)

	mu     sync.Mutex // guards everything below
	period uint32     // the state period whose calls the window holds

	// The window's totals: of the ring, or of the buckets.
	calls, failures, slow int

	// Count window: the last len(ring) outcomes; the next goes at next.
	ring []uint8
	next int

	// Time window: bucket i holds the calls that ended in the epoch
	// (instant/width) congruent to i modulo windowBuckets, among the
	// windowBuckets epochs up to epoch, the latest seen.
	buckets [windowBuckets]bucket
	epoch   int64

	// Time window with the real clock: the successes counted without the
	// lock, and what the published tags mean. Tags of this period are
	// tagBase + (epoch - tagEpoch), tagEpoch being the first epoch
	// published in it (valid when tagged); a new period starts its tags
	// past lastTag, the latest tag published.
	fast              *core.Window
	tagBase, lastTag  uint32
	tagEpoch          int64
	tagged, withdrawn bool // withdrawn: the withdrawal timer is pending
	clock             Clock

	// A count window with SlowCall or InFlight: set, under mu, while the
	// window is clean (cleanLocked), so that a success that is not slow,
	// which cannot change it, is not recorded (the state word's
	// WindowFlag stays set: every call is timed).
	clean atomic.Bool

	// The calls in flight (SlowCall, InFlight), nil otherwise: not
	// guarded by mu (see tracker), which only its scans and its claims
	// past every slot take.
	track *tracker
}

type bucket struct{ calls, failures, slow int }

// newWindow returns the window of cfg. clock is the breaker's clock when
// it is the real one (a stepped test clock reads the clock on every call
// instead), else nil.
func newWindow(conf *atomic.Pointer[Config], clock Clock) *window {
	cfg := conf.Load()
	w := &window{conf: conf, counting: cfg.windowed(), tracking: cfg.SlowCall > 0 || cfg.InFlight > 0}
	switch {
	case cfg.WindowCalls > 0:
		w.ring = make([]uint8, cfg.WindowCalls)
		w.cleanable = true
	case cfg.WindowPeriod > 0:
		w.width = max(int64(cfg.WindowPeriod/10), 1)
		if clock != nil {
			// A stripe per P, for as many Ps as GOMAXPROCS may grow to.
			w.fast = core.NewWindow(max(goruntime.GOMAXPROCS(0), goruntime.NumCPU()))
			w.clock = clock
		}
	}
	if w.tracking {
		w.track = newTracker(clock == nil)
	}
	return w
}

// resetLocked empties the window for state period p. Tracked calls stay:
// those of older periods end as usual, and their outcomes are ignored.
func (w *window) resetLocked(p uint32) {
	w.period = p
	w.next, w.calls, w.failures, w.slow = 0, 0, 0, 0
	w.buckets = [windowBuckets]bucket{}
	w.epoch = math.MinInt64
	w.clean.Store(false)
	if w.fast != nil {
		w.fast.Pub.Store(0)
		if w.tagged {
			w.tagBase = w.lastTag + windowBuckets + 1 // past every tag a counter may hold
			w.tagged = false
		}
	}
}

// tagLocked returns the tag of epoch e in the current period.
func (w *window) tagLocked(e int64) uint32 {
	if !w.tagged {
		w.tagged, w.tagEpoch = true, e
	}
	return w.tagBase + uint32(e-w.tagEpoch)
}

// publishLocked publishes, after the window changed at instant now, the
// bucket of now for the lock-free success path when a success can take
// it: the window is in its period's CLOSED state, a success cannot trip
// the breaker (the window holds no failure and no slow call, or at least
// MinimumCalls calls, whose rates a success that is not slow can only
// lower), and now is not in the last
// 1/publishMargin of its bucket. A timer withdraws the bucket then, and
// the first success after it records itself here, which publishes the
// next bucket. Otherwise it withdraws the published bucket.
func (w *window) publishLocked(now int64, calls, failures, slow int) {
	if w.fast == nil {
		return
	}
	e := w.epoch // the latest epoch seen (rollLocked)
	end := (e+1)*w.width - max(w.width/publishMargin, 1)
	if now >= end || (failures+slow > 0 && calls < w.cfg().MinimumCalls) {
		w.fast.Pub.Store(0)
		return
	}
	tag := w.tagLocked(e)
	w.lastTag = tag
	w.fast.Pub.Store(uint64(w.period)<<32 | uint64(tag)<<1 | 1)
	if !w.withdrawn {
		w.withdrawn = true
		w.clock.AfterFunc(time.Duration(end-now), func() {
			w.mu.Lock()
			w.withdrawn = false
			w.fast.Pub.Store(0)
			w.mu.Unlock()
		})
	}
}

// addLocked records one ended call with outcome bits at instant now (read
// only by a time window).
func (w *window) addLocked(bits uint8, now int64) {
	failed, slow := int(bits&failedBit), int(bits&slowBit>>1)
	if w.width == 0 {
		if w.calls == len(w.ring) {
			old := w.ring[w.next]
			w.failures -= int(old & failedBit)
			w.slow -= int(old & slowBit >> 1)
		} else {
			w.calls++
		}
		w.ring[w.next] = bits
		w.failures += failed
		w.slow += slow
		if w.next++; w.next == len(w.ring) {
			w.next = 0
		}
		return
	}
	w.rollLocked(now)
	b := &w.buckets[bucketOf(w.epoch)]
	b.calls++
	b.failures += failed
	b.slow += slow
	w.calls++
	w.failures += failed
	w.slow += slow
}

// rollLocked moves a time window on to instant now: the buckets of the
// epochs that ended more than windowBuckets-1 epochs ago are emptied. It
// costs a division, and a loop only when a new epoch began.
func (w *window) rollLocked(now int64) {
	epoch := now / w.width
	if epoch <= w.epoch {
		return // the same epoch (or a clock that went back: count it in the latest)
	}
	from := epoch - windowBuckets + 1
	if w.epoch >= from {
		from = w.epoch + 1
	}
	for e := from; e <= epoch; e++ {
		b := &w.buckets[bucketOf(e)]
		w.calls -= b.calls
		w.failures -= b.failures
		w.slow -= b.slow
		*b = bucket{}
	}
	w.epoch = epoch
}

func bucketOf(epoch int64) int {
	i := epoch % windowBuckets
	if i < 0 {
		i += windowBuckets
	}
	return int(i)
}

// totalsLocked returns the calls, failures and slow calls in the window at
// instant now (read only by a time window).
func (w *window) totalsLocked(now int64) (calls, failures, slow int) {
	if w.width > 0 {
		w.rollLocked(now)
		if w.fast != nil && w.tagged {
			return w.calls + w.fast.Sum(w.tagLocked(w.epoch), windowBuckets), w.failures, w.slow
		}
	}
	return w.calls, w.failures, w.slow
}

// cleanLocked reports whether the window is a full count window with no
// failure and no slow call: a success cannot change it.
func (w *window) cleanLocked() bool {
	return w.cleanable && w.calls == len(w.ring) && w.failures == 0 && w.slow == 0
}

// tripReason returns the reason to trip when the window's rates, over
// its totals calls, failures and slow, reach their thresholds, or "".
func (w *window) tripReason(calls, failures, slow int) string {
	if calls == 0 || calls < w.cfg().MinimumCalls {
		return ""
	}
	if rate := float64(failures) / float64(calls); rate >= w.cfg().FailureRate {
		return fmt.Sprintf("failure rate %s (%d of %s) >= %s", percent(rate), failures, w.span(calls), percent(w.cfg().FailureRate))
	}
	if w.cfg().SlowCall > 0 {
		if rate := float64(slow) / float64(calls); rate >= w.cfg().SlowRate {
			return fmt.Sprintf("slow calls %s (%d of %d over %s) >= %s", percent(rate), slow, calls, w.cfg().SlowCall, percent(w.cfg().SlowRate))
		}
	}
	return ""
}

// span says which calls a window holds: "50 calls in 1m0s" or "the last 50
// calls".
func (w *window) span(calls int) string {
	if w.width == 0 {
		return "the last " + strconv.Itoa(calls) + " calls"
	}
	return strconv.Itoa(calls) + " calls in " + w.cfg().WindowPeriod.String()
}

// name is the window as Stats shows it: "100 calls" or "1m0s".
func (w *window) name() string {
	if w.width == 0 {
		return strconv.Itoa(len(w.ring)) + " calls"
	}
	return w.cfg().WindowPeriod.String()
}

// percent formats a fraction as a percentage with at most one decimal:
// "62%", "66.7%".
func percent(f float64) string {
	s := strconv.FormatFloat(f*100, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + "%"
}

// inFlightLocked returns how many timed calls have not ended.
func (w *window) inFlightLocked() int { return w.track.inFlight() }

// overdueReason is the reason of a trip by a call found in flight too
// long: "call in flight 31s > inflight=30s".
func overdueReason(age, limit time.Duration) string {
	if r := age.Round(time.Millisecond); r > limit {
		age = r
	}
	return "call in flight " + age.String() + " > inflight=" + limit.String()
}

// admitTracked times a CLOSED call admitted in state word s by win, the
// breaker's window (which times calls), after counting the calls found
// overdue. ok is false when it found some: the caller must look at the
// state again, which their count may have changed. Without push (a
// breaker whose calls are timed from when they hold their concurrency
// slot, see trackSlot), it only counts them, and returns an admission
// without WindowFlag: not timed yet. It takes no lock unless a call may
// be overdue (see tracker) or every slot is taken.
func (b *Breaker) admitTracked(win *window, s uint64, push bool) (w uint64, ok bool) {
	if b.beforeWindow(s) {
		return 0, false // a period before the window's (Registry.Update): look again
	}
	limit := b.cfg().InFlight
	if !push && limit == 0 {
		return s &^ windowFlag, true
	}
	var now int64
	if b.stamps.mono { // b.stamps.now(), one call sooner (too large to inline)
		now = int64(time.Since(b.stamps.anchor))
	} else {
		now = b.stamps.now()
	}
	if limit > 0 && win.track.mayBeOverdue(now, limit) {
		if !b.countOverdueAt(win, s, now, limit) {
			return 0, false
		}
	}
	if !push {
		return s &^ windowFlag, true
	}
	// win.claim, written out (one call sooner).
	t := win.track
	id := t.claim(now, period(s))
	if id == 0 {
		id = win.claimLocked(now, period(s))
	}
	if limit > 0 { // after the slot is written (see tracker): the deadline of this call
		if d := now + int64(limit); d < t.due.Load() {
			t.lowerDue(d)
		}
	}
	return s | id<<probeShift, true
}

// claim times a call of period p admitted at instant now and returns its
// tracking id; limit is Config.InFlight.
func (w *window) claim(now int64, p uint32, limit time.Duration) uint64 {
	t := w.track
	id := t.claim(now, p)
	if id == 0 {
		id = w.claimLocked(now, p)
	}
	// After the slot is written (see tracker): the deadline of this call.
	if limit > 0 {
		if d := now + int64(limit); d < t.due.Load() {
			t.lowerDue(d)
		}
	}
	return id
}

// claimLocked is tracker.claimLocked under the window's lock.
func (w *window) claimLocked(now int64, p uint32) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.track.claimLocked(now, p)
}

// trackSlot starts timing the CLOSED call admitted as w (by admitTracked
// without push) once it holds its concurrency slot: a call waiting for a
// slot is not in flight for InFlight and SlowCall. It returns the timed
// admission.
func (b *Breaker) trackSlot(w uint64) uint64 {
	if State(w&stateMask) != Closed {
		return w // a probe: not timed
	}
	win := b.win.Load()
	if win == nil || !win.tracking || b.beforeWindow(w) {
		return w // replaced by Registry.Update, or admitted before the window: not timed
	}
	id := win.claim(b.stamps.now(), period(w), b.cfg().InFlight)
	return w | windowFlag | id<<probeShift
}

// checkOverdue counts the calls of CLOSED state word s found overdue; every
// look at the state makes it (see [Breaker.State]).
func (b *Breaker) checkOverdue(s uint64) {
	win := b.win.Load()
	if win == nil || !win.tracking {
		return // replaced by Registry.Update
	}
	limit := b.cfg().InFlight
	if now := b.stamps.now(); win.track.mayBeOverdue(now, limit) {
		b.countOverdueAt(win, s, now, limit)
	}
}

// countOverdueAt counts the calls of CLOSED state word s found in flight in
// win longer than limit at instant now, and reports whether there were
// none.
func (b *Breaker) countOverdueAt(win *window, s uint64, now int64, limit time.Duration) bool {
	win.mu.Lock()
	n, slow, age := win.track.overdueLocked(now, period(s), limit, b.cfg().SlowCall)
	win.mu.Unlock()
	b.countOverdue(s, n, slow, age, now)
	return n == 0
}

// countOverdue counts n calls of CLOSED state word s found in flight too
// long at instant now, the oldest for age, as failures; the first slow of
// them (the oldest) are slow calls.
func (b *Breaker) countOverdue(s uint64, n, slow int, age time.Duration, now int64) {
	for i := range n {
		var bits uint8 = failedBit
		if i < slow {
			bits |= slowBit
		}
		b.countOutcome(Failure, now)
		b.closedFailure(s, nil, age, bits, now)
	}
}

// timedWindow returns the window that timed the CLOSED call admitted as w,
// or nil when Registry.Update replaced it since (the call is not judged
// by its duration).
func (b *Breaker) timedWindow(w uint64) *window {
	win := b.win.Load()
	if win == nil || !win.tracking || b.beforeWindow(w) {
		return nil
	}
	return win
}

// endTracked ends the timing of the CLOSED call admitted as w with outcome
// o: it returns the outcome as the breaker counts it (a call that ran
// longer than InFlight is a failure, also when its own outcome counts as
// neither, as a look at the state before its end would have counted it),
// its outcome bits, the instant it ended, and ok false when the outcome
// must be ignored (it was counted as overdue already). Calls that were
// not made (refused, or withdrawn after a limiter's wait) are not judged.
func (b *Breaker) endTracked(w uint64, o Outcome) (_ Outcome, bits uint8, now int64, age time.Duration, ok bool) {
	win := b.timedWindow(w)
	if win == nil {
		return o, 0, 0, 0, true
	}
	start, ok := win.track.end(w & probeMask >> probeShift)
	cfg := b.cfg()
	if !ok || o > Ignored || (o == Ignored && cfg.InFlight == 0) || start == 0 {
		return o, 0, 0, 0, ok // start 0: not timed (see tracker.claimLocked)
	}
	now = b.stamps.now()
	ran := time.Duration(now - start)
	if o == Ignored {
		if ran > cfg.InFlight {
			return Failure, 0, now, ran, true // not slow: its own outcome is no call's
		}
		return o, 0, 0, 0, true
	}
	if cfg.SlowCall > 0 && ran > cfg.SlowCall {
		bits |= slowBit
	}
	if cfg.InFlight > 0 && ran > cfg.InFlight {
		return Failure, bits, now, ran, true
	}
	return o, bits, now, 0, true
}

// record adds an ended call of the CLOSED period of w to the window, and
// trips the breaker when a rate reaches its threshold.
func (b *Breaker) record(w uint64, bits uint8, now int64) {
	win := b.win.Load()
	if win == nil || !win.counting {
		return
	}
	if bits == 0 && win.tracking {
		// A success that is not slow cannot change a clean count window,
		// nor trip a time window that published a bucket.
		if win.clean.Load() || (win.fast != nil && win.fast.Count(w)) {
			return
		}
	}
	if win.width > 0 && now == 0 {
		now = b.stamps.now()
	}
	win.mu.Lock()
	if win.period != period(w) {
		win.mu.Unlock()
		return // admitted in an older period
	}
	win.addLocked(bits, now)
	calls, failures, slow := win.totalsLocked(now)
	reason := win.tripReason(calls, failures, slow)
	if win.cleanable {
		if win.tracking {
			win.clean.Store(win.cleanLocked())
		} else {
			b.syncWindowFlagLocked(win)
		}
	}
	if reason == "" {
		win.publishLocked(now, calls, failures, slow)
	}
	win.mu.Unlock()
	if reason != "" {
		b.trip(w, reason, 0)
	}
}

// syncWindowFlagLocked makes the CLOSED state word's WindowFlag say whether
// calls must be recorded: clear for a clean window, set otherwise. The
// lock of win, the breaker's window, is held, so the flag follows the
// window's changes in order.
func (b *Breaker) syncWindowFlagLocked(win *window) {
	clean := win.cleanLocked()
	for {
		s := b.state.Load()
		if period(s) != win.period || State(s&stateMask) != Closed {
			return
		}
		want := s | windowFlag
		if clean {
			want = s &^ windowFlag
		}
		if want == s || b.state.CompareAndSwap(s, want) {
			return
		}
	}
}

// windowStats fills the window figures of st.
func (b *Breaker) windowStats(st *Stats) {
	win := b.win.Load()
	if win == nil {
		return
	}
	win.mu.Lock()
	defer win.mu.Unlock()
	if b.cfg().InFlight > 0 {
		if b.cfg().Concurrency == 0 { // else the calls holding a slot (loadStats)
			st.InFlight = win.inFlightLocked()
		}
		st.InFlightSeconds = b.cfg().InFlight.Seconds()
	}
	if !win.counting {
		return
	}
	var now int64
	if win.width > 0 {
		now = b.stamps.now()
	}
	calls, failures, slow := win.totalsLocked(now)
	st.Window = win.name()
	st.WindowCalls, st.WindowFailures, st.WindowSlow = calls, failures, slow
	st.FailureRateThreshold = b.cfg().FailureRate
	st.SlowRateThreshold = b.cfg().SlowRate
	st.SlowSeconds = b.cfg().SlowCall.Seconds()
	if calls > 0 {
		st.FailureRate = float64(failures) / float64(calls)
		st.SlowRate = float64(slow) / float64(calls)
	}
}

// cfg returns the breaker's settings (see [Registry.Update]).
func (w *window) cfg() *Config { return w.conf.Load() }
