package contend_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/quote"
)

// The behaviour tests put each contender in a situation and record what it
// does; cmd/report tabulates the records. They assert breakergen's contract
// (SPEC section 4) and only record the peers' behaviour.
//
// Time: breakergen, gobreaker, failsafe-go and go-resiliency read the
// standard library's clock and timers, so their tests run inside a
// testing/synctest bubble, where time is fake and waits are instant (none of
// the peers has a clock seam of its own). hystrix-go starts process-wide
// goroutines that cannot live in a bubble, so its tests use real windows of
// 20 ms and poll, each wait bounded (at most a few hundred milliseconds).

// behaviourOut names the file (JSON lines) the records are appended to; the
// tests only log them when it is unset.
const behaviourOut = "BENCH_BEHAVIOUR_OUT"

// Record is one cell of the behaviour table.
type Record struct {
	Contender string `json:"contender"`
	Property  string `json:"property"`
	Value     string `json:"value"`
}

var recordMu sync.Mutex

func record(t *testing.T, contender, property, value string) {
	t.Helper()
	t.Logf("%s %s: %s", contender, property, value)
	path := os.Getenv(behaviourOut)
	if path == "" {
		return
	}
	recordMu.Lock()
	defer recordMu.Unlock()
	b, err := json.Marshal(Record{contender, property, value})
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	require.NoError(t, err)
}

// mode is what the scripted upstream does on its next calls.
type mode int32

const (
	ok      mode = iota // answers at once
	fail                // returns quote.ErrUpstream
	block               // waits until released (a probe that hangs or is lost)
	cancel              // cancels the caller's ctx, then returns ctx.Err()
	explode             // panics
)

// scripted is the upstream of the behaviour tests: it counts the calls that
// reached it (so a rejection is a call that did not) and does what its mode
// says.
type scripted struct {
	mode    atomic.Int32
	calls   atomic.Int64
	release chan struct{}
	cancel  context.CancelFunc
}

func newScripted() *scripted { return &scripted{release: make(chan struct{})} }

func (u *scripted) set(m mode) { u.mode.Store(int32(m)) }

func (u *scripted) Quote(ctx context.Context, code string) (quote.Quote, error) {
	u.calls.Add(1)
	switch mode(u.mode.Load()) {
	case fail:
		return quote.Quote{}, quote.ErrUpstream
	case block:
		<-u.release
		return quote.Quote{}, nil
	case cancel:
		u.cancel()
		return quote.Quote{}, ctx.Err()
	case explode:
		panic("upstream exploded")
	}
	return quote.Quote{Code: code}, nil
}

// admitted reports whether a call in mode ok reached the upstream.
func (u *scripted) admitted(q quote.Quoter) bool {
	u.set(ok)
	before := u.calls.Load()
	q.Quote(context.Background(), "600519")
	return u.calls.Load() > before
}

// A subject is one contender under test, with how time passes for it.
type subject struct {
	name string
	make func(up quote.Quoter, s contend.Settings) quote.Quoter
	// real: the library cannot run in a synctest bubble; the test uses
	// real windows and polls.
	real bool
}

var subjects = func() []subject {
	var ss []subject
	for _, c := range guarded {
		ss = append(ss, subject{name: c.name, make: c.make, real: c.name == "hystrix"})
	}
	return ss
}()

// window is the reset: fake time in a bubble, real time otherwise.
func (s subject) window() time.Duration {
	if s.real {
		return 20 * time.Millisecond
	}
	return time.Second
}

// run runs f in a synctest bubble, or directly for a real-time subject.
func (s subject) run(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	if s.real {
		f(t)
		return
	}
	synctest.Test(t, func(t *testing.T) {
		f(t)
		// go-resiliency sleeps out its reset in a goroutine: let
		// (fake) time run out every window so that the bubble can end.
		time.Sleep(2 * time.Hour)
	})
}

// settle waits until the goroutines started by the test are blocked or done:
// synctest.Wait in a bubble; for a real-time subject, until done() holds or a
// second has passed.
func (s subject) settle(done func() bool) {
	if !s.real {
		synctest.Wait()
		return
	}
	for deadline := time.Now().Add(time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// halfOpen builds the subject with threshold 1, trips it with one failure,
// and lets its reset pass; a HALF_OPEN probe is due.
func (s subject) halfOpen(t *testing.T, up *scripted) quote.Quoter {
	t.Helper()
	q := s.make(up, contend.Settings{Threshold: 1, Reset: s.window()})
	up.set(fail)
	q.Quote(context.Background(), "600519")
	// hystrix counts asynchronously: wait (bounded) until it rejects.
	opened := false
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		before := up.calls.Load()
		q.Quote(context.Background(), "600519")
		if up.calls.Load() == before {
			opened = true
			break
		}
	}
	require.True(t, opened, "one failure did not open the breaker")
	time.Sleep(s.window() + s.window()/10)
	return q
}

// recovers reports whether a call is admitted within ten resets.
func (s subject) recovers(up *scripted, q quote.Quoter) bool {
	for range 10 {
		if up.admitted(q) {
			return true
		}
		time.Sleep(s.window())
	}
	return false
}

// TestBehaviourHalfOpenConcurrency: 100 callers arrive at once at a breaker
// whose probe is due; each probe hangs until all 100 have been answered or
// admitted. How many reach the upstream?
func TestBehaviourHalfOpenConcurrency(t *testing.T) {
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			s.run(t, func(t *testing.T) {
				up := newScripted()
				q := s.halfOpen(t, up)
				up.set(block)
				before := up.calls.Load()
				var wg sync.WaitGroup
				var answered atomic.Int64
				for range 100 {
					wg.Go(func() {
						q.Quote(context.Background(), "600519")
						answered.Add(1)
					})
				}
				s.settle(func() bool { return up.calls.Load()-before+answered.Load() == 100 })
				n := up.calls.Load() - before
				close(up.release)
				wg.Wait()
				record(t, s.name, "halfopen", fmt.Sprint(n))
				if s.name == "breakergen" {
					assert.EqualValues(t, 1, n, "halfopen=1 admits one probe")
				}
			})
		})
	}
}

// TestBehaviourCancellation: a threshold-1 breaker sees one call whose caller
// cancels its ctx while it runs (the upstream returns ctx.Err()). Is the
// next call rejected, i.e. did the cancellation count as a failure?
func TestBehaviourCancellation(t *testing.T) {
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			s.run(t, func(t *testing.T) {
				up := newScripted()
				q := s.make(up, contend.Settings{Threshold: 1, Reset: time.Hour})
				ctx, cancelCtx := context.WithCancel(context.Background())
				defer cancelCtx()
				up.cancel = cancelCtx
				up.set(cancel)
				_, err := q.Quote(ctx, "600519")
				require.ErrorIs(t, err, context.Canceled)
				if s.real {
					// hystrix counts asynchronously; a probing call that
					// succeeded would also dilute its error rate.
					time.Sleep(50 * time.Millisecond)
				}
				tripped := !up.admitted(q)
				record(t, s.name, "cancel", yesNo(tripped))
				if s.name == "breakergen" {
					assert.False(t, tripped, "a caller's cancellation is not a failure")
				}
			})
		})
	}
}

// TestBehaviourLostProbe: the one probe of a HALF_OPEN breaker hangs and
// never reports. Is a call admitted again within ten resets, or is the
// breaker stuck in HALF_OPEN?
func TestBehaviourLostProbe(t *testing.T) {
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			s.run(t, func(t *testing.T) {
				up := newScripted()
				q := s.halfOpen(t, up)
				up.set(block)
				before := up.calls.Load()
				done := make(chan struct{})
				go func() {
					defer close(done)
					q.Quote(context.Background(), "600519")
				}()
				s.settle(func() bool { return up.calls.Load() > before })
				require.EqualValues(t, 1, up.calls.Load()-before, "the probe was not admitted")
				rec := s.recovers(up, q)
				close(up.release)
				<-done
				record(t, s.name, "lostprobe", map[bool]string{true: "recovers", false: "stuck"}[rec])
				if s.name == "breakergen" {
					assert.True(t, rec, "a lost probe's slot is reclaimed")
				}
			})
		})
	}
}

// TestBehaviourPanic: the probe of a HALF_OPEN breaker panics (the caller
// recovers). Is a call admitted again within ten resets? hystrix runs
// the call in a goroutine of its own, where a panic ends the process: that
// case runs in a child process (TestHystrixPanicChild) and records whether
// the child crashed.
func TestBehaviourPanic(t *testing.T) {
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			if s.name == "hystrix" {
				cmd := exec.Command(os.Args[0], "-test.run=^TestHystrixPanicChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), "BENCH_HYSTRIX_PANIC_CHILD=1", behaviourOut+"=")
				out, err := cmd.CombinedOutput()
				var exit *exec.ExitError
				crashed := errors.As(err, &exit) && strings.Contains(string(out), "upstream exploded")
				require.True(t, crashed || err == nil, "child: %v\n%s", err, out)
				record(t, s.name, "panic", map[bool]string{true: "crashes the process", false: "survives"}[crashed])
				return
			}
			s.run(t, func(t *testing.T) {
				up := newScripted()
				q := s.halfOpen(t, up)
				up.set(explode)
				reraised := func() (v any) {
					defer func() { v = recover() }()
					q.Quote(context.Background(), "600519")
					return nil
				}() != nil
				rec := s.recovers(up, q)
				v := map[bool]string{true: "freed", false: "stuck"}[rec]
				if !reraised {
					v += " (panic swallowed)"
				}
				record(t, s.name, "panic", v)
				if s.name == "breakergen" {
					assert.True(t, reraised, "the panic is re-raised")
					assert.True(t, rec, "a panic frees its slot")
				}
			})
		})
	}
}

// TestHystrixPanicChild is TestBehaviourPanic's child process for hystrix;
// it does nothing unless that test started it.
func TestHystrixPanicChild(t *testing.T) {
	if os.Getenv("BENCH_HYSTRIX_PANIC_CHILD") == "" {
		t.Skip("run by TestBehaviourPanic")
	}
	up := newScripted()
	up.set(explode)
	q := contend.NewHystrix(up, contend.Settings{Threshold: 1, Reset: time.Hour})
	func() {
		defer func() { recover() }()
		q.Quote(context.Background(), "600519")
	}()
	time.Sleep(100 * time.Millisecond) // the panic, if any, ends the process first
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestBehaviourAllocs counts the allocations of one breakergen call on each
// benchmarked path with testing.AllocsPerRun, which (unlike -benchmem's
// per-op average over a run) does not round a rare allocation away.
func TestBehaviourAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	for _, name := range []string{"Success", "Rejection", "Failure", "Limited"} {
		t.Run(name, func(t *testing.T) {
			sc := scenarios[name]
			q := guarded[0].make(quote.NewUpstream(sc.err), sc.settings)
			sc.prepare(t, q)
			ctx := context.Background()
			n := testing.AllocsPerRun(1000, func() { q.Quote(ctx, "600519") })
			sc.prepare(t, q)
			record(t, "breakergen", "allocs:"+name, fmt.Sprint(n))
			assert.Zero(t, n, "allocations per call")
		})
	}
}
