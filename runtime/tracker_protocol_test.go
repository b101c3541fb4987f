package runtime

import (
	"log/slog"
	"math"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The tracker's protocol (see tracker), stressed from inside the package:
// calls claim and end slots on many goroutines, ending most on another
// goroutine (so on another P) than the one that claimed them, while a
// scanner counts the old ones overdue. The race detector cannot see the
// plain accesses the protocol makes (setStart, seg.next), so the tests
// check ownership themselves: a slot held by two calls at once, a call
// counted twice, or a recent call counted overdue fails them.

const (
	protoOld    = 1       // the start of a call the scanner finds overdue
	protoRecent = 1 << 40 // the start of one it must never count
	protoNow    = protoRecent
	protoLimit  = time.Duration(protoRecent / 2)
)

type protoRun struct {
	t       *testing.T
	tr      *tracker
	mu      sync.Mutex      // the window's lock: claimLocked, overdueLocked
	owner   []atomic.Uint64 // by tracking id: the call that holds it, 0 for none
	seq     atomic.Uint64   // call numbers
	counted atomic.Int64    // calls the scanner counted overdue
	ignored atomic.Int64    // calls whose end said: counted, ignore the outcome
	bad     atomic.Int64    // recent calls whose end said so (a wrong count)
	ends    chan protoCall  // calls handed to another goroutine to end
	tick    chan struct{}   // see pace
	stop    atomic.Bool
}

// stressIters is how many calls each worker of a stress test makes: the
// tests are bounded by work, not by time, so that a loaded machine runs
// them longer rather than testing less. The race detector slows a call
// about twentyfold; its runs make fewer.
var stressIters = map[bool]int{false: 50_000, true: 4000}[underRace]

// pace hands a tick to a goroutine that changes something while workers
// run (GOMAXPROCS, the settings), every 64 calls of a worker: it never
// blocks the worker.
func pace(tick chan<- struct{}, i int) {
	if i%64 == 0 {
		select {
		case tick <- struct{}{}:
		default:
		}
	}
}

type protoCall struct {
	id  uint64
	n   uint64
	old bool
}

func newProtoRun(t *testing.T) *protoRun {
	return &protoRun{
		t:     t,
		tr:    newTracker(false),
		owner: make([]atomic.Uint64, 2*maxTracked), // ids stay below: fewer than maxTracked calls at once
		ends:  make(chan protoCall, 256),
		tick:  make(chan struct{}, 1),
	}
}

func (r *protoRun) claim(old bool) (protoCall, bool) {
	start := int64(protoRecent)
	if old {
		start = protoOld
	}
	id := r.tr.claim(start, 1)
	if id == 0 {
		r.mu.Lock()
		id = r.tr.claimLocked(start, 1)
		r.mu.Unlock()
	}
	if id == 0 {
		r.t.Error("no tracking id below maxTracked calls")
		return protoCall{}, false
	}
	if id >= uint64(len(r.owner)) {
		r.t.Errorf("tracking id %d past %d with few calls in flight", id, len(r.owner))
		return protoCall{}, false
	}
	c := protoCall{id: id, n: r.seq.Add(1), old: old}
	if prev := r.owner[id].Swap(c.n); prev != 0 {
		r.t.Errorf("tracking id %d given to call %d while call %d holds it", id, c.n, prev)
	}
	return c, true
}

func (r *protoRun) end(c protoCall) {
	if !r.owner[c.id].CompareAndSwap(c.n, 0) {
		r.t.Errorf("call %d ends, but tracking id %d is held by call %d", c.n, c.id, r.owner[c.id].Load())
	}
	start, ok := r.tr.end(c.id)
	want := int64(protoRecent)
	if c.old {
		want = protoOld
	}
	if start != want {
		r.t.Errorf("call %d (id %d) ends with start %d, want %d", c.n, c.id, start, want)
	}
	if !ok {
		r.ignored.Add(1)
		if !c.old {
			r.bad.Add(1)
		}
	}
}

func (r *protoRun) scan() {
	r.mu.Lock()
	n, _, _ := r.tr.overdueLocked(protoNow, 1, protoLimit, 0)
	r.mu.Unlock()
	r.counted.Add(int64(n))
}

// run claims stressIters calls on each of workers goroutines, a third of them old, and
// ends them on the same goroutine or on an ender's, while one goroutine
// scans and, with toggle, another changes GOMAXPROCS.
func (r *protoRun) run(workers int, toggle []int) {
	var wg, enders sync.WaitGroup
	for range 2 {
		enders.Go(func() {
			for c := range r.ends {
				r.end(c)
			}
		})
	}
	wg.Go(func() {
		for !r.stop.Load() {
			r.scan()
			goruntime.Gosched()
		}
	})
	if len(toggle) > 0 {
		wg.Go(func() {
			for i := 0; ; i++ {
				if _, ok := <-r.tick; !ok {
					return
				}
				goruntime.GOMAXPROCS(toggle[i%len(toggle)])
			}
		})
	}
	var workersWG sync.WaitGroup
	for w := range workers {
		workersWG.Go(func() {
			var held []protoCall
			for i := range stressIters {
				pace(r.tick, i)
				c, ok := r.claim((i+w)%3 == 0)
				if !ok {
					break
				}
				held = append(held, c)
				if len(held) < 1+(i+w)%80 { // up to 80 in flight: past a home segment
					continue
				}
				for k, c := range held {
					if k%2 == 0 {
						r.ends <- c
					} else {
						r.end(c)
					}
				}
				held = held[:0]
				if i%16 == 0 {
					r.scan() // scans while this one's calls run on other Ps
					goruntime.Gosched()
				}
			}
			for _, c := range held {
				r.end(c)
			}
		})
	}
	workersWG.Wait()
	r.stop.Store(true)
	close(r.tick)
	wg.Wait()
	close(r.ends)
	enders.Wait()
	r.scan()
}

func (r *protoRun) check() {
	t := r.t
	if n := r.bad.Load(); n != 0 {
		t.Errorf("%d recent calls were counted overdue (a scanner counted a slot's next call)", n)
	}
	if c, i := r.counted.Load(), r.ignored.Load(); c != i {
		t.Errorf("the scanner counted %d calls, the ends of %d said they were counted", c, i)
	}
	t.Logf("%d calls, %d counted overdue, %d segments", r.seq.Load(), r.counted.Load(), len(*r.tr.segs.Load()))
	if r.counted.Load() == 0 {
		t.Error("no call was found overdue: the test did not test the scanner")
	}
	if n := r.tr.inFlight(); n != 0 {
		t.Errorf("%d calls in flight after every call ended", n)
	}
	for id := range r.owner {
		if n := r.owner[id].Load(); n != 0 {
			t.Errorf("tracking id %d still held by call %d", id, n)
		}
	}
	segs := *r.tr.segs.Load()
	for i, seg := range segs {
		if u := seg.used.Load(); u != 0 {
			t.Errorf("segment %d (home %d): bitmap %#x after every call ended", i, r.tr.home, u)
		}
		for j := range seg.slots {
			if st := seg.slots[j].word.Load() & slotState; st != slotFree {
				t.Errorf("segment %d slot %d: state %d after every call ended", i, j, st)
			}
		}
	}
}

// TestTrackerProtocolStress: no slot is held by two calls, every call
// found overdue is counted once and its end ignored, no other is, and
// every slot is free at the end.
func TestTrackerProtocolStress(t *testing.T) {
	r := newProtoRun(t)
	r.run(8, nil)
	r.check()
	if len(*r.tr.segs.Load()) == r.tr.home {
		t.Error("the table never grew: the shared segments were not tested")
	}
}

// TestTrackerProtocolMoreProcsThanHomes: GOMAXPROCS raised past the home
// segments the tracker was made with (and moved up and down while calls
// run): the Ps without a home claim in the shared segments, and the
// protocol holds.
func TestTrackerProtocolMoreProcsThanHomes(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(0))
	r := newProtoRun(t)
	more := 4 * r.tr.home
	if more > math.MaxInt32 {
		t.Skip()
	}
	goruntime.GOMAXPROCS(more)
	r.run(more, []int{more, 1, r.tr.home, more / 2})
	r.check()
}

// TestTrackerSlotWordNeverRepeats: the word a scanner read for a call is
// not the word of the next call in the slot, so the scanner's
// compare-and-swap of it fails (no ABA), in a home segment (claimed with
// a plain load) and a shared one (claimed through its bitmap), with the
// real clock's gens and a test clock's (ordered).
func TestTrackerSlotWordNeverRepeats(t *testing.T) {
	for _, ordered := range []bool{false, true} {
		tr := newTracker(ordered)
		segs := append(*tr.segs.Load(), new(trackSeg))
		tr.segs.Store(&segs)
		for _, i := range []int{0, len(segs) - 1} {
			s := &segs[i].slots[5]
			id := tr.fill(s, s.word.Load(), i, 5, protoOld, 1)
			read := s.word.Load() // a scanner's look
			for range 3 {         // ended, and taken again by a call of the same period
				if _, ok := tr.end(id); !ok {
					t.Fatal("a live call's end said it was counted")
				}
				id = tr.fill(s, s.word.Load(), i, 5, protoOld, 1)
				if s.word.CompareAndSwap(read, read&^slotState|slotCounted) {
					t.Fatalf("ordered %v, segment %d: the scanner counted the slot's next call (word %#x again)", ordered, i, read)
				}
				read = s.word.Load()
			}
			tr.end(id)
		}
	}
}

// TestTrackerRoutePathStress: the route's path (ops.AdmitTimed, which
// claims in the P's home segment written out, and ops.WindowSuccess,
// which ends there written out) on many goroutines, past a home segment
// per goroutine, ended half on other goroutines, with GOMAXPROCS past the
// home segments and moving: no tracking id is given to two calls in
// flight, and none is left in flight.
func TestTrackerRoutePathStress(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(0))
	reg := NewRegistry(WithoutEnv(), WithLogger(slog.New(slog.DiscardHandler)))
	b := reg.Breaker(Config{Name: "route", InFlight: time.Hour, SlowCall: time.Hour, WindowCalls: 100, FailureThreshold: 1 << 20})
	o := (*ops)(b)
	home := b.win.Load().track.home
	procs := []int{4 * home, 1, home, 2 * home}
	goruntime.GOMAXPROCS(procs[0])
	owner := make([]atomic.Uint64, 2*maxTracked)
	var seq, fast atomic.Uint64
	ends := make(chan [2]uint64, 256) // word, call
	end := func(w, n uint64) {
		id := w & probeMask >> probeShift
		if !owner[id].CompareAndSwap(n, 0) {
			t.Errorf("call %d ends, but tracking id %d is held by call %d", n, id, owner[id].Load())
		}
		o.WindowSuccess(w)
	}
	var enders, others sync.WaitGroup
	for range 2 {
		enders.Go(func() {
			for c := range ends {
				end(c[0], c[1])
			}
		})
	}
	tick := make(chan struct{}, 1)
	others.Go(func() {
		for i := 0; ; i++ {
			if _, ok := <-tick; !ok {
				return
			}
			goruntime.GOMAXPROCS(procs[i%len(procs)])
		}
	})
	var workers sync.WaitGroup
	for g := range 4 * home {
		workers.Go(func() {
			var held [][2]uint64
			for i := range stressIters {
				pace(tick, i)
				s := b.state.Load()
				if s&fastMask != windowFlag {
					t.Errorf("state word %#x: not the route's timed path", s)
					break
				}
				w, ok := o.AdmitTimed(s)
				if ok {
					fast.Add(1)
				} else {
					var err error
					if w, err = b.admitSlow(0); err != nil {
						t.Error(err)
						break
					}
				}
				id := w & probeMask >> probeShift
				if id == 0 || id >= uint64(len(owner)) {
					t.Errorf("tracking id %d with few calls in flight", id)
					return
				}
				n := seq.Add(1)
				if prev := owner[id].Swap(n); prev != 0 {
					t.Errorf("tracking id %d given to call %d while call %d holds it", id, n, prev)
				}
				held = append(held, [2]uint64{w, n})
				if len(held) < 1+(i+g)%80 {
					continue
				}
				for k, c := range held {
					if k%2 == 0 {
						ends <- c
					} else {
						end(c[0], c[1])
					}
				}
				held = held[:0]
			}
			for _, c := range held {
				end(c[0], c[1])
			}
		})
	}
	workers.Wait()
	close(tick)
	close(ends)
	enders.Wait()
	others.Wait()
	st := b.Stats()
	t.Logf("%d calls, %d through AdmitTimed, %d segments", seq.Load(), fast.Load(), len(*b.win.Load().track.segs.Load()))
	if st.InFlight != 0 || st.Failures != 0 || st.State != Closed {
		t.Errorf("after every call ended: %d in flight, %d failures, %v", st.InFlight, st.Failures, st.State)
	}
	if fast.Load() == 0 {
		t.Error("no call took AdmitTimed's path")
	}
}

// TestTrackerUpdateWhileCallsRun: Registry.Update turns SlowCall and
// InFlight on and off and changes the window (a new tracker each time)
// while calls run on many goroutines through the route's path and
// Acquire, past a home segment each and ended half on other goroutines:
// a call timed by a tracker that Update replaced ends without touching
// the new one (whose table is smaller: an id past it would panic), and
// no call is left in flight.
func TestTrackerUpdateWhileCallsRun(t *testing.T) {
	reg := NewRegistry(WithoutEnv(), WithLogger(slog.New(slog.DiscardHandler)))
	confs := []Config{
		{Name: "u", InFlight: time.Hour, FailureThreshold: 1 << 20},
		{Name: "u", InFlight: time.Hour, SlowCall: time.Hour, WindowCalls: 100, FailureThreshold: 1 << 20},
		{Name: "u", FailureThreshold: 1 << 20},
		{Name: "u", SlowCall: time.Hour, WindowPeriod: time.Minute, FailureThreshold: 1 << 20},
		{Name: "u", InFlight: 2 * time.Hour, WindowCalls: 50, FailureThreshold: 1 << 20},
	}
	b := reg.Breaker(confs[0])
	o := (*ops)(b)
	var calls, routed atomic.Uint64
	ends := make(chan uint64, 256)
	tick := make(chan struct{}, 1)
	end := func(w uint64) {
		if w&fastMask == windowFlag && State(w&stateMask) == Closed {
			o.WindowSuccess(w)
		} else {
			b.Release(Token{b: b, word: w}, nil)
		}
	}
	var enders, updater, workers sync.WaitGroup
	for range 2 {
		enders.Go(func() {
			for w := range ends {
				end(w)
			}
		})
	}
	updater.Go(func() {
		for i := 1; ; i++ {
			if _, ok := <-tick; !ok {
				return
			}
			if err := reg.Update(confs[i%len(confs)]); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for g := range 8 {
		workers.Go(func() {
			var held []uint64
			for i := range stressIters {
				pace(tick, i)
				var w uint64
				var ok bool
				if s := b.state.Load(); s&fastMask == windowFlag && (i+g)%2 == 0 {
					w, ok = o.AdmitTimed(s)
				}
				if ok {
					routed.Add(1)
				} else {
					var err error
					if w, err = b.admitSlow(0); err != nil {
						t.Error(err)
						return
					}
				}
				calls.Add(1)
				held = append(held, w)
				if len(held) < 1+(i+g)%100 {
					continue
				}
				for k, w := range held {
					if k%2 == 0 {
						ends <- w
					} else {
						end(w)
					}
				}
				held = held[:0]
			}
			for _, w := range held {
				end(w)
			}
		})
	}
	workers.Wait()
	close(tick)
	updater.Wait()
	close(ends)
	enders.Wait()
	t.Logf("%d calls, %d through AdmitTimed", calls.Load(), routed.Load())
	if st := b.Stats(); st.InFlight != 0 || st.Failures != 0 || st.State != Closed {
		t.Errorf("after every call ended: %d in flight, %d failures, %v", st.InFlight, st.Failures, st.State)
	}
	if routed.Load() == 0 {
		t.Error("no call took AdmitTimed's path")
	}
}

// TestTrackerRoutePathOverdueOnce: calls admitted through the route's
// path (AdmitTimed: the home segment's plain claim) and left hanging are
// each found overdue once, by looks at the state from many goroutines at
// once, while the calls around them, ended through WindowSuccess on other
// goroutines, are not; the hung calls' late successes are ignored, and
// their slots are taken again.
func TestTrackerRoutePathOverdueOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := NewRegistry(WithoutEnv(), WithLogger(slog.New(slog.DiscardHandler)))
		b := reg.Breaker(Config{Name: "route", InFlight: time.Minute, FailureThreshold: 1 << 20})
		o := (*ops)(b)
		admit := func() uint64 {
			s := b.state.Load()
			if s&fastMask != windowFlag {
				t.Fatalf("state word %#x: not the route's timed path", s)
			}
			w, ok := o.AdmitTimed(s)
			if !ok {
				t.Fatal("AdmitTimed refused a call with nothing overdue")
			}
			return w
		}
		const rounds, calls = 3, 150 // past a home segment each round
		var hung []uint64
		for r := range rounds {
			ws := make([]uint64, calls)
			for i := range ws {
				ws[i] = admit()
			}
			var wg sync.WaitGroup
			for i, w := range ws {
				if i%50 == r { // hung
					hung = append(hung, w)
					continue
				}
				wg.Go(func() { o.WindowSuccess(w) })
			}
			wg.Wait()
			time.Sleep(time.Second)
		}
		if n := b.Stats().InFlight; n != len(hung) {
			t.Fatalf("%d in flight, want the %d hung", n, len(hung))
		}
		time.Sleep(time.Minute)
		var looks sync.WaitGroup
		for range 8 {
			looks.Go(func() { b.State() })
		}
		looks.Wait()
		st := b.Stats()
		if st.Failures != uint64(len(hung)) || st.InFlight != len(hung) || st.State != Closed {
			t.Fatalf("after a minute: %d failures, %d in flight, %v; want %d hung calls counted once, closed", st.Failures, st.InFlight, st.State, len(hung))
		}
		var wg sync.WaitGroup
		for _, w := range hung {
			wg.Go(func() { o.WindowSuccess(w) })
		}
		wg.Wait()
		for range calls { // the slots are free again: admitted and ended at once
			o.WindowSuccess(admit())
		}
		if st := b.Stats(); st.Failures != uint64(len(hung)) || st.InFlight != 0 {
			t.Fatalf("after the hung calls ended: %d failures, %d in flight; want %d failures, their ends ignored", st.Failures, st.InFlight, len(hung))
		}
	})
}

// TestTrackerDueNeverPassesALiveCall: due, the instant before which no
// look scans, never passes the deadline of a call in flight, while calls
// claim slots (and lower due) on many goroutines and scans raise it: the
// claim's store of its word before its load of due, and the scan's raise
// before its second look at the words, leave no call unseen by both.
func TestTrackerDueNeverPassesALiveCall(t *testing.T) {
	tr := newTracker(false)
	var mu sync.Mutex
	var clock atomic.Int64
	const limit = 1000
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			now := clock.Add(7)
			if now > tr.due.Load() || tr.last.Load() != limit {
				mu.Lock()
				tr.overdueLocked(now, 1, limit, 0)
				mu.Unlock()
			}
		}
	})
	var workers sync.WaitGroup
	for g := range 8 {
		workers.Go(func() {
			var held []uint64
			for i := range stressIters {
				now := clock.Add(1)
				id := tr.claim(now, 1)
				if id == 0 {
					mu.Lock()
					id = tr.claimLocked(now, 1)
					mu.Unlock()
				}
				d := now + limit
				if d < tr.due.Load() {
					tr.lowerDue(d)
				}
				// Between scans (under their lock), due is at most the
				// deadline of this call, unless a scan counted it.
				mu.Lock()
				w := (*tr.segs.Load())[(id-1)/segSlots].slots[(id-1)%segSlots].word.Load()
				if due := tr.due.Load(); due > d && w&slotState == slotLive {
					t.Errorf("a call claimed at %d, due at %d, is live, but due says %d: no look would find it", now, d, due)
				}
				mu.Unlock()
				held = append(held, id)
				if len(held) > 1+(i+g)%70 {
					for _, id := range held[:len(held)-1] { // one stays in flight
						tr.end(id)
					}
					held = held[len(held)-1:]
				}
			}
		})
	}
	workers.Wait()
	stop.Store(true)
	wg.Wait()
	due := tr.due.Load()
	live := 0
	for i, seg := range *tr.segs.Load() {
		for j := range seg.slots {
			s := &seg.slots[j]
			if s.word.Load()&slotState != slotLive {
				continue
			}
			live++
			if d := s.start + limit; d < due {
				t.Errorf("segment %d slot %d: a call in flight is due at %d, due says %d: no look would find it", i, j, d, due)
			}
		}
	}
	t.Logf("%d calls left in flight", live)
}
