package runtime

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakergen/breakergen/runtime/internal/core"
)

// RecordingVersion is the version of the recording format that
// [WithRecorder] writes (docs/rehearse.md): the header's second word is
// "v" followed by it.
const RecordingVersion = 1

// RecordingHeader is the first word of a recording's first line.
const RecordingHeader = "breakergen-recording"

// RecordBufferCapacity is how many calls a recorder holds between the
// calls that make them and the goroutine that writes them; a call that
// finds the buffer full is dropped and counted (see [RecordingHealth]).
const RecordBufferCapacity = 8192

// The outcome classes of a recording's lines, in the order of their codes.
var recordClasses = [...]string{
	"success",       // the breaker counted a success: no error, an excluded one, a classifier's verdict
	"failure",       // the breaker counted a failure: the upstream's error, a panic, a deadline (one that cut injected latency short included)
	"ignored",       // the upstream's error counted as neither (the caller's cancel, a classifier, a hedge's loser)
	"invalid",       // the upstream answered data its valid func rejected
	"injected",      // fault injection failed the call; the upstream was not called
	"rejected",      // the breaker refused the call (OPEN, HALF_OPEN full, ISOLATED)
	"rate_limited",  // the limiter refused it
	"throttled",     // the adaptive throttle refused it
	"bulkhead_full", // no concurrency slot came free in time
	"budget",        // the retry budget was spent
	"canceled",      // the caller's ctx ended a wait before the upstream, counted as neither
}

// RecordClasses returns the outcome classes a recording's lines use, in a
// fixed order: what the upstream did (success, failure, ignored, invalid),
// then the ways a call is failed or refused before it (injected, rejected,
// rate_limited, throttled, bulkhead_full, budget, canceled).
func RecordClasses() []string { return recordClasses[:] }

// WithRecorder records every call of the registry's breakers to w: one
// line per call with its start (from the recording's start; for a call
// that took a concurrency slot, when it held it, as [Config].InFlight and
// SlowCall time it), its duration, its outcome class (as the breaker
// counted the call) and its breaker's name, after a header line
// with the format's version and the start time; the format is documented
// in docs/rehearse.md and read by `breakergen sim`. Calls of generated
// wrappers and chains and of [Breaker.Do] are recorded; Acquire and
// Release callers are not.
//
// A call is never blocked by the recording: it queues its line in a buffer
// of [RecordBufferCapacity] lines, which one goroutine, started by
// [NewRegistry], writes to w; a call that finds the buffer full is dropped
// and counted ([Registry.Health], and the recording's last line). Call
// [Registry.Close] to write what is queued, end the recording and stop the
// goroutine (inside a testing/synctest bubble, before the bubble ends). w
// is written by that goroutine only; a write error ends the recording
// (Close returns it) and the calls after it are dropped.
//
// Recording turns on [WithCallCounts]: a recorded call reads the clock
// twice and leaves the breaker's fast path. A registry without it pays
// nothing. A nil w is ignored.
func WithRecorder(w io.Writer) Option {
	return func(r *Registry) {
		if w != nil {
			r.recordTo = w
			r.countCalls = true
		}
	}
}

// recorder writes a registry's calls (see WithRecorder).
type recorder struct {
	clock Clock
	start time.Time
	mono  bool // clock is the real clock: offsets come from time.Since(start)
	lines chan callLine
	stop  chan struct{}
	done  chan struct{}

	// sending is held for reading while a call checks closed and sends
	// its line, and for writing while Close sets closed: once Close has
	// it, no line is sent that the writer's last drain would miss.
	sending  sync.RWMutex
	closed   atomic.Bool
	queued   atomic.Uint64 // lines taken into the buffer
	dropped  atomic.Uint64 // calls not recorded: a full buffer, a write error, after Close
	stopOnce sync.Once
	err      error // the first write error; read after done is closed
}

// callLine is one recorded call.
type callLine struct {
	name  string
	start int64 // ns from the recording's start
	dur   int64 // ns
	class uint8
	retry int64 // ns of cooldown a failure asked for (RetryAfter), 0 for none
}

// startRecorder starts the registry's recorder, once every option is
// applied (the clock among them).
func (r *Registry) startRecorder() {
	if r.recordTo == nil {
		return
	}
	_, mono := r.clock.(realClock)
	rc := &recorder{
		clock: r.clock, start: r.clock.Now(), mono: mono,
		lines: make(chan callLine, RecordBufferCapacity),
		stop:  make(chan struct{}), done: make(chan struct{}),
	}
	r.rec = rc
	go rc.run(r.recordTo)
}

// Now returns the current instant, in ns from the recording's start.
func (rc *recorder) Now() int64 {
	if rc.mono {
		return int64(time.Since(rc.start))
	}
	return int64(rc.clock.Now().Sub(rc.start))
}

// Record queues the line of one call of b; see core.Recorder.
func (rc *recorder) Record(b any, start int64, stage core.Stage, err error) {
	rc.record(b.(*Breaker), start, stage, err)
}

// record queues the line of a call of b that ended at stage with err: a
// failure whose error asks for a cooldown (a RetryAfter method, see
// [Config]) records it.
func (rc *recorder) record(b *Breaker, start int64, stage core.Stage, err error) {
	class := classOf(stage, err)
	var retry time.Duration
	if class == classFailure && err != nil {
		if d, _ := retryAfter(err); d > 0 {
			retry = min(d, MaxCooldown)
		}
	}
	rc.line(b, start, class, retry)
}

// Drop counts a call that is not recorded; see core.Recorder.
func (rc *recorder) Drop() { rc.dropped.Add(1) }

func (rc *recorder) line(b *Breaker, start int64, class uint8, retry time.Duration) {
	end := rc.Now()
	rc.sending.RLock()
	if rc.closed.Load() {
		rc.sending.RUnlock()
		rc.dropped.Add(1)
		return
	}
	// Counted before it is sent: the writer may lose it (see lose), and
	// must find it counted.
	rc.queued.Add(1)
	select {
	case rc.lines <- callLine{name: b.cfg().Name, start: start, dur: max(end-start, 0), class: class, retry: int64(retry)}:
	default:
		rc.queued.Add(^uint64(0))
		rc.dropped.Add(1)
	}
	rc.sending.RUnlock()
}

// The class codes that classOf names (see recordClasses).
const (
	classSuccess = iota
	classFailure
	classIgnored
	classInvalid
	classInjected
	classRejected
	classRateLimited
	classThrottled
	classBulkheadFull
	classBudget
	classCanceled
)

// stageOf returns the stage a call is recorded at when its breaker
// counted it as o.
func stageOf(o Outcome) core.Stage {
	switch o {
	case Success:
		return core.Succeeded
	case Failure:
		return core.Failed
	}
	return core.Ignored
}

// classOf returns the class code of a call that ended at stage with err
// (see recordClasses). The stage is the outcome the breaker applied, so
// that the class is what the live breaker counted and `breakergen sim`
// replays that; only a refusal (core.Refused) is told by its error.
func classOf(stage core.Stage, err error) uint8 {
	switch stage {
	case core.Succeeded:
		return classSuccess
	case core.Failed, core.Panicked:
		return classFailure
	case core.Ignored, core.Gone:
		return classIgnored
	case core.Invalid:
		return classInvalid
	}
	switch {
	case core.ErrorIs(err, ErrInjected):
		return classInjected
	case core.ErrorIs(err, ErrOpen):
		return classRejected
	case core.ErrorIs(err, ErrRateLimited):
		return classRateLimited
	case core.ErrorIs(err, ErrThrottled):
		return classThrottled
	case core.ErrorIs(err, ErrBulkheadFull):
		return classBulkheadFull
	case core.ErrorIs(err, ErrBudget):
		return classBudget
	}
	return classCanceled
}

// recordFlushSize is how many bytes of lines the recorder's goroutine
// gathers before it writes them; it writes sooner whenever the buffer of
// queued calls runs empty.
const recordFlushSize = 64 << 10

// run writes the header, then every queued line, writing whenever the
// buffer is empty or recordFlushSize bytes are gathered, until Close;
// then the trailer. A write that fails ends the recording: the lines it
// did not write whole, and every line after it, are dropped, not
// recorded (lose).
func (rc *recorder) run(w io.Writer) {
	defer close(rc.done)
	buf := make([]byte, 0, recordFlushSize+256)
	var ends []int // where each call's line in buf ends
	buf = fmt.Appendf(buf, "%s v%d start=%s unit=ns sample=1\n", RecordingHeader, RecordingVersion, rc.start.UTC().Format(time.RFC3339Nano))
	flush := func() {
		if rc.err != nil || len(buf) == 0 {
			return
		}
		n, err := w.Write(buf)
		if err == nil && n < len(buf) {
			err = io.ErrShortWrite
		}
		if err != nil {
			rc.err = err
			lost := 0
			for _, e := range ends {
				if e > n {
					lost++ // not written whole
				}
			}
			rc.lose(lost)
		}
		buf, ends = buf[:0], ends[:0]
	}
	write := func(l callLine) {
		if rc.err != nil {
			rc.lose(1)
			return
		}
		buf = appendLine(buf, l)
		ends = append(ends, len(buf))
		if len(buf) >= recordFlushSize {
			flush()
		}
	}
	for {
		select {
		case l := <-rc.lines:
			write(l)
			continue
		default:
		}
		flush()
		select {
		case l := <-rc.lines:
			write(l)
		case <-rc.stop:
			for {
				select {
				case l := <-rc.lines:
					write(l)
					continue
				default:
				}
				break
			}
			if rc.err == nil {
				// Written only if every line before it is: a trailer in
				// the recording vouches for its counts.
				buf = fmt.Appendf(buf, "# end calls=%d dropped=%d\n", rc.queued.Load(), rc.dropped.Load())
			}
			flush()
			return
		}
	}
}

// lose moves n calls that were queued, and so counted as recorded, to the
// dropped ones: a failed write lost their lines.
func (rc *recorder) lose(n int) {
	if n > 0 {
		rc.dropped.Add(uint64(n))
		rc.queued.Add(^uint64(n - 1))
	}
}

// appendLine appends l as a line of the format: start, duration, class
// (with "/" and the cooldown a failure asked for), name (quoted when it
// would not read back as itself).
func appendLine(b []byte, l callLine) []byte {
	b = strconv.AppendInt(b, l.start, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, l.dur, 10)
	b = append(b, ' ')
	b = append(b, recordClasses[l.class]...)
	if l.retry > 0 {
		b = append(b, '/')
		b = strconv.AppendInt(b, l.retry, 10)
	}
	b = append(b, ' ')
	if l.name == "" || strings.ContainsAny(l.name, "\"\n\r") || strings.TrimSpace(l.name) != l.name {
		b = strconv.AppendQuote(b, l.name)
	} else {
		b = append(b, l.name...)
	}
	return append(b, '\n')
}

// Close ends what the registry's options started: with [WithRecorder], it
// writes the queued calls and the recording's last line, stops the
// recorder's goroutine and returns the first write error. The breakers
// keep working; calls made after Close are not recorded. Close may be
// called more than once; without a recorder it does nothing.
//
// Close waits for the writer as long as it takes: a Write that blocks (a
// hung network file system, a pipe nobody reads) blocks Close, and a
// shutdown that calls it. Give the wait a bound with [Registry.CloseContext].
func (r *Registry) Close() error { return r.CloseContext(context.Background()) }

// CloseContext is [Registry.Close] that waits for the writer only until
// ctx is done, and then returns an error matching ctx.Err(): the
// recording is not finished (no last line), and its goroutine returns
// once the Write it is blocked in does (closing the writer's file or pipe
// usually makes it). Calls made after it are not recorded either way; a
// later Close or CloseContext waits again.
func (r *Registry) CloseContext(ctx context.Context) error {
	rc := r.rec
	if rc == nil {
		return nil
	}
	rc.stopOnce.Do(func() {
		rc.sending.Lock() // no call is between its check of closed and its send
		rc.closed.Store(true)
		rc.sending.Unlock()
		close(rc.stop)
	})
	select {
	case <-rc.done:
		return rc.err
	case <-ctx.Done():
		return fmt.Errorf("breaker: the recording's writer did not finish: %w", context.Cause(ctx))
	}
}

// RecordingHealth is the state of a registry's recording ([WithRecorder]).
type RecordingHealth struct {
	// Calls counts the calls recorded (queued for the writer, or
	// written).
	Calls uint64 `json:"calls"`
	// Dropped counts the calls not recorded: the buffer was full, a
	// write failed (the lines it did not write whole, and every call
	// after it, move from Calls to Dropped), or the recording had ended
	// ([Registry.Close]). Calls + Dropped is every call the registry's
	// breakers made (as a snapshot, it may lag by the calls being counted).
	Dropped uint64 `json:"dropped"`
}

// Recording returns the state of the registry's recording, as
// [Health].Recording says it: nil when it records nothing. A view that
// pages the breakers (httphealth's) reads it without Health's every
// breaker.
func (r *Registry) Recording() *RecordingHealth { return r.recordingHealth() }

// recordingHealth returns the recording's state, nil without one.
func (r *Registry) recordingHealth() *RecordingHealth {
	if r.rec == nil {
		return nil
	}
	return &RecordingHealth{Calls: r.rec.queued.Load(), Dropped: r.rec.dropped.Load()}
}

// doRecorded is Do on a registry that records: the call's line is queued
// once it is settled.
func (b *Breaker) doRecorded(ctx context.Context, bud *core.Budget, fn func(context.Context) error) (err error) {
	rc := b.reg.rec
	start := rc.Now()
	if !bud.Available() {
		rc.record(b, start, core.Refused, ErrBudget)
		return ErrBudget
	}
	t, err := b.Acquire(ctx)
	if err != nil {
		rc.record(b, start, core.Refused, err)
		return err
	}
	if t.word&core.LoadFlag != 0 {
		// It holds its concurrency slot from now (or passed the
		// throttle): the breaker times it from now (see Config.InFlight),
		// and so does the recording.
		start = rc.Now()
	}
	if !bud.Spend() { // see Do
		b.Record(t, Ignored, nil)
		rc.record(b, start, core.Refused, ErrBudget)
		return ErrBudget
	}
	if b.injector != nil {
		var stage core.Stage
		if t.word, stage, err = b.injectStaged(ctx, t.word, 0); err != nil {
			rc.record(b, start, stage, err)
			return err
		}
	}
	defer b.exitRecorded(t, &err, start)
	err = core.PanicGuard
	return fn(ctx)
}

// exitRecorded is exit for doRecorded. It must be called directly by
// defer, so that its recover sees a panic.
func (b *Breaker) exitRecorded(t Token, errp *error, start int64) {
	rc := b.reg.rec
	if *errp == core.PanicGuard {
		v := recover()
		stage := core.Panicked // a panic is a failure
		if v == nil {
			stage = core.Gone // the goroutine exited: neither
		}
		rc.record(b, start, stage, nil)
		b.core.Unreturned(t.word, v)
		return
	}
	err := *errp
	if err == nil {
		b.core.Release(t.ctx, t.word, nil)
		rc.record(b, start, core.Succeeded, nil)
		return
	}
	// Recorded as the breaker settled it; a classifier that panics ends
	// the call as a failure (classifyAdmitted), and so it is recorded.
	stage := core.Panicked
	defer func() { rc.record(b, start, stage, err) }()
	stage = (*ops)(b).Settled(t.ctx, t.word, err)
}

func init() {
	core.RecorderOf = func(reg any) core.Recorder {
		if rc := reg.(*Registry).rec; rc != nil {
			return rc
		}
		return nil
	}
}
