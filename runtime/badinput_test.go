package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// fieldErr is an error type whose methods read its fields, as most do: a
// nil *fieldErr returned as an error (the typed-nil mistake) panics in
// them.
type fieldErr struct {
	msg   string
	after time.Duration
}

func (e *fieldErr) Error() string { return e.msg }

// banErr asks for a cooldown that it reads from its header: one without a
// header panics in RetryAfter.
type banErr struct{ hdr *fieldErr }

func (e *banErr) Error() string             { return "banned" }
func (e *banErr) RetryAfter() time.Duration { return e.hdr.after }

// wrapErr wraps an error it reads from a field.
type wrapErr struct{ err error }

func (e *wrapErr) Error() string { return "wrapped: " + e.err.Error() }
func (e *wrapErr) Unwrap() error { return e.err }

// didPanic runs f and returns what it panicked with, nil if nothing.
func didPanic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// TestBriefTypedNil: Brief of an error whose Error method panics (a nil
// pointer of a type whose Error reads a field) says so instead of panicking,
// as fmt does.
func TestBriefTypedNil(t *testing.T) {
	var got string
	if v := didPanic(func() { got = runtime.Brief((*fieldErr)(nil)) }); v != nil {
		t.Fatalf("Brief of a nil *fieldErr panicked: %v", v)
	}
	if want := "runtime_test.fieldErr: <nil>"; got != want {
		t.Errorf("Brief = %q, want %q", got, want)
	}
	for _, err := range []error{(*runtime.OpenError)(nil), (*runtime.ChainError)(nil), (*runtime.RateLimitError)(nil), (*runtime.InjectedError)(nil)} {
		if v := didPanic(func() { got = runtime.Brief(err) }); v != nil {
			t.Errorf("Brief(%T(nil)) panicked: %v", err, v)
		}
	}
}

// TestTypedNilErrorTrips: a call that fails with a typed-nil error counts as
// a failure and trips the breaker like any other, without a panic out of Do.
func TestTypedNilErrorTrips(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "typednil", FailureThreshold: 1})
	var nilErr *fieldErr
	var err error
	if v := didPanic(func() {
		err = b.Do(context.Background(), func(context.Context) error { return nilErr })
	}); v != nil {
		t.Fatalf("Do panicked: %v", v)
	}
	if err == nil {
		t.Errorf("Do returned nil, want the typed-nil error")
	}
	if s := b.State(); s != runtime.Open {
		t.Errorf("state %v after a failure at threshold 1, want OPEN", s)
	}
	if evs := reg.Events(1); len(evs) != 1 || evs[0].Reason != "runtime_test.fieldErr: <nil>" {
		t.Errorf("events %+v, want one trip whose reason names the type", evs)
	}
}

// TestTypedNilProbeFailure: a HALF_OPEN probe that fails with a typed-nil
// error (or one whose RetryAfter panics) re-opens the breaker; the breaker
// takes its lock for this, and a panic there would leave it locked for ever.
func TestTypedNilProbeFailure(t *testing.T) {
	for name, fail := range map[string]error{
		"Error":      (*fieldErr)(nil),
		"RetryAfter": &banErr{},
		"Unwrap":     (*wrapErr)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			reg, clock := newTestRegistry(t)
			b := reg.Breaker(runtime.Config{Name: "probe", FailureThreshold: 1, ResetTimeout: time.Second})
			_ = b.Do(context.Background(), func(context.Context) error { return errors.New("down") })
			clock.Advance(time.Second)
			if s := b.State(); s != runtime.HalfOpen {
				t.Fatalf("state %v, want HALF_OPEN", s)
			}
			if v := didPanic(func() {
				_ = b.Do(context.Background(), func(context.Context) error { return fail })
			}); v != nil {
				t.Fatalf("a failing probe panicked (with the breaker's lock held): %v", v)
			}
			if s := b.State(); s != runtime.Open {
				t.Errorf("state %v after a failed probe, want OPEN", s)
			}
		})
	}
}

// TestLimiterTinyRate: a limiter whose next token is centuries away (a tiny
// positive rate) refuses a bounded wait at once. The wait used to overflow
// time.Duration, come out negative and admit every call without waiting.
func TestLimiterTinyRate(t *testing.T) {
	for _, rate := range []float64{1e-11, 1e-300, math.SmallestNonzeroFloat64} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
				l := reg.Limiter("tiny", rate, 1)
				if !l.Allow() {
					t.Fatal("the burst's token was refused")
				}
				if err := l.Wait(context.Background(), time.Hour); !errors.Is(err, runtime.ErrRateLimited) {
					t.Errorf("Wait with maxWait 1h: %v, want ErrRateLimited", err)
				}
				ctx, cancel := context.WithDeadline(context.Background(), reg.Clock().Now().Add(time.Hour))
				defer cancel()
				if err := l.Wait(ctx, 0); !errors.Is(err, runtime.ErrRateLimited) {
					t.Errorf("Wait with a deadline in 1h: %v, want ErrRateLimited", err)
				}
				if l.Allow() {
					t.Error("Allow took a token that was not there")
				}
			})
		})
	}
}

// TestDoNilFn: Do with a nil fn returns an error before the breaker is
// asked. It used to admit the call and panic in it, counting a failure: a
// programming mistake in one caller tripped the breaker shared by all.
func TestDoNilFn(t *testing.T) {
	for _, record := range []bool{false, true} {
		t.Run(fmt.Sprint("record=", record), func(t *testing.T) {
			opts := []runtime.Option{runtime.WithCallCounts()}
			if record {
				opts = append(opts, runtime.WithRecorder(io.Discard))
			}
			reg, _ := newTestRegistry(t, opts...)
			t.Cleanup(func() { _ = reg.Close() })
			b := reg.Breaker(runtime.Config{Name: "nilfn", FailureThreshold: 1})
			var err error
			if v := didPanic(func() { err = b.Do(context.Background(), nil) }); v != nil {
				t.Fatalf("Do(ctx, nil) panicked: %v", v)
			}
			if err == nil || !strings.Contains(err.Error(), "nil fn") || !strings.Contains(err.Error(), "nilfn") {
				t.Errorf("Do(ctx, nil) = %v, want an error naming the breaker and the nil fn", err)
			}
			if st := b.Stats(); st.State != runtime.Closed || st.Calls != 0 || st.Failures != 0 {
				t.Errorf("after Do(ctx, nil): state %v, %d calls, %d failures; want CLOSED and nothing counted", st.State, st.Calls, st.Failures)
			}
		})
	}
}

// TestEnvDurationBelowNanosecond: a duration variable in seconds that
// rounds to no time at all (0.0000000001, 1e-12) is malformed, warned
// about by name, and the lower layer's value stays. It used to parse as a
// zero Duration, which means "not given": the variable was ignored without
// a word.
func TestEnvDurationBelowNanosecond(t *testing.T) {
	env := []string{
		"BREAKER_TINYDUR_RESET=0.0000000001",
		"BREAKER_TINYDUR_SLOW=1e-12",
		"BREAKER_TINYDUR_INFLIGHT=0.0000000001",
		"BREAKER_TINYDUR_LATENCY=1e-12@50%",
		"BREAKER_TINYDUR2_RESET=1e-12..10s",
	}
	restore := runtime.SetEnviron(env)
	defer restore()
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	annotated := runtime.Config{Name: "tinydur", ResetTimeout: 5 * time.Second, WindowCalls: 100, SlowCall: time.Second, InFlight: time.Minute}
	got := reg.Settle(annotated)
	if got.ResetTimeout != 5*time.Second || got.SlowCall != time.Second || got.InFlight != time.Minute || got.Latency != 0 {
		t.Errorf("settled reset %v slow %v inflight %v latency %v; want the annotation's 5s, 1s, 1m and none",
			got.ResetTimeout, got.SlowCall, got.InFlight, got.Latency)
	}
	out := logs.String()
	for _, kv := range env {
		v, _, _ := strings.Cut(kv, "=")
		if !strings.Contains(out, "variable="+v+"\n") {
			t.Errorf("no warning names %s:\n%s", v, out)
		}
	}
}

// TestResetAtMostADay: no OPEN period is longer than MaxCooldown (24h),
// which is as long as a fleet's peers follow a trip (they ignore a note
// that asks for more): a Config's longer ResetTimeout or ResetMax is cut
// to it when the breaker is made, and the environment's is refused by
// name, the annotation's (or the lower layer's) kept. A reset of 25h used
// to trip the process alone, the peers logging "ignored a note".
func TestResetAtMostADay(t *testing.T) {
	var cut logBuffer
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(cut.logger()))
	cfg := reg.Breaker(runtime.Config{Name: "long", ResetTimeout: 25 * time.Hour}).Config()
	if cfg.ResetTimeout != runtime.MaxCooldown {
		t.Errorf("ResetTimeout 25h became %s, want MaxCooldown", cfg.ResetTimeout)
	}
	cfg = reg.Breaker(runtime.Config{Name: "backoff", ResetTimeout: time.Minute, ResetMax: 48 * time.Hour}).Config()
	if cfg.ResetTimeout != time.Minute || cfg.ResetMax != runtime.MaxCooldown {
		t.Errorf("reset 1m..48h became %s..%s, want 1m..MaxCooldown", cfg.ResetTimeout, cfg.ResetMax)
	}
	reg.Breaker(runtime.Config{Name: "long", ResetTimeout: 25 * time.Hour}) // the same breaker: said once
	reg.Breaker(runtime.Config{Name: "day", ResetTimeout: runtime.MaxCooldown})
	fam := reg.Family(runtime.Config{Name: "longfam", ResetTimeout: 30 * time.Hour}, runtime.FamilyConfig{})
	fam.Breaker("a")
	// A cut Config was cut without a word: say it, once, naming the field.
	for _, want := range []string{
		"breaker[long]: ResetTimeout 25h0m0s is above 24h0m0s",
		"breaker[backoff]: ResetMax 48h0m0s is above 24h0m0s",
		"breaker[longfam]: ResetTimeout 30h0m0s is above 24h0m0s",
	} {
		if n := strings.Count(cut.String(), want); n != 1 {
			t.Errorf("%d warnings say %q, want 1:\n%s", n, want, cut.String())
		}
	}
	if strings.Contains(cut.String(), "breaker[day]") || strings.Contains(cut.String(), "longfam/a") {
		t.Errorf("a reset of MaxCooldown, or a key of a family warned of already, is warned of:\n%s", cut.String())
	}

	env := []string{
		"BREAKER_LONGENV_RESET=25h",
		"BREAKER_LONGENV2_RESET=1m..48h",
		"BREAKER_LONGENV3_RESET=100000000000",
	}
	restore := runtime.SetEnviron(env)
	defer restore()
	var logs logBuffer
	reg = runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	for _, name := range []string{"longenv", "longenv2", "longenv3"} {
		got := reg.Settle(runtime.Config{Name: name, ResetTimeout: 5 * time.Second})
		if got.ResetTimeout != 5*time.Second || got.ResetMax != 0 {
			t.Errorf("%s: settled reset %s..%s, want the annotation's 5s", name, got.ResetTimeout, got.ResetMax)
		}
	}
	out := logs.String()
	for _, want := range []string{"25h0m0s is more than 24h0m0s", "the cap 48h0m0s is more than 24h0m0s", "100000000000 seconds is too long"} {
		if !strings.Contains(out, want) {
			t.Errorf("no warning says %q:\n%s", want, out)
		}
	}
	for _, kv := range env {
		v, _, _ := strings.Cut(kv, "=")
		if !strings.Contains(out, "variable="+v+"\n") {
			t.Errorf("no warning names %s:\n%s", v, out)
		}
	}
}

// TestFractionAboveOne: a Config's fraction above 1 (most often a
// percentage: 50 for 0.5) is made 1 when the breaker is made, as Config
// says, and said to be, once a field, naming it. It was made 1 without a
// word: a FailureRate of 50 then tripped only when every call failed, a
// Fault of 30 failed every call, and WithConfig's the same.
func TestFractionAboveOne(t *testing.T) {
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(logs.logger()),
		runtime.WithConfig(runtime.Config{Name: "over", LatencyRate: 40},
			runtime.Config{Name: "famrate/b", FailureThreshold: 3},
			runtime.Config{Name: "famrate/c", SlowCall: time.Second, SlowRate: 20}))
	win := runtime.Config{Name: "rates", WindowCalls: 100, FailureRate: 50, SlowCall: time.Second, SlowRate: 80, ResetJitter: 10}
	cfg := reg.Breaker(win).Config()
	if cfg.FailureRate != 1 || cfg.SlowRate != 1 || cfg.ResetJitter != 1 {
		t.Errorf("rates 50, 80 and jitter 10 became %v, %v, %v; want 1 each", cfg.FailureRate, cfg.SlowRate, cfg.ResetJitter)
	}
	reg.Breaker(win) // the same breaker: said once
	reg.Breaker(runtime.Config{Name: "kept", WindowCalls: 100, FailureRate: 0.5})
	reg.Breaker(runtime.Config{Name: "kept", WindowCalls: 100, FailureRate: 50}) // ignored: the first settings are kept
	reg.Breaker(runtime.Config{Name: "faulty", Fault: 30})
	reg.Breaker(runtime.Config{Name: "over", Latency: time.Millisecond})
	reg.Breaker(runtime.Config{Name: "whole", WindowCalls: 100, FailureRate: 1, Fault: 1, Latency: time.Millisecond})
	fam := reg.Family(runtime.Config{Name: "famrate", WindowCalls: 100, FailureRate: 75}, runtime.FamilyConfig{})
	fam.Breaker("a")
	fam.Breaker("b") // its own layer (WithConfig below) gives no fraction
	fam.Breaker("c") // its own layer gives one
	for _, want := range []string{
		"breaker[rates]: FailureRate 50 is above 1 (a fraction: 0.5 for 50%); using 1",
		"breaker[rates]: SlowRate 80 is above 1",
		"breaker[rates]: ResetJitter 10 is above 1",
		"breaker[faulty]: Fault 30 is above 1",
		"breaker[over]: LatencyRate 40 is above 1",
		"breaker[famrate]: FailureRate 75 is above 1",
		"breaker[famrate/c]: SlowRate 20 is above 1",
	} {
		if n := strings.Count(logs.String(), want); n != 1 {
			t.Errorf("%d warnings say %q, want 1:\n%s", n, want, logs.String())
		}
	}
	for _, not := range []string{"breaker[whole]", "breaker[kept]: FailureRate", "famrate/a", "breaker[famrate/b]", "breaker[famrate/c]: FailureRate"} {
		// A fraction of 1; a breaker made already, whose first settings
		// stand; a family's key, whose family's fraction was warned of
		// by the family's name.
		if strings.Contains(logs.String(), not) {
			t.Errorf("a warning names %s:\n%s", not, logs.String())
		}
	}
}

// TestEventCapacityHuge: WithEventCapacity(math.MaxInt) makes a registry
// whose log keeps everything, at the cost of what it holds. The log was
// allocated whole at NewRegistry: math.MaxInt panicked (makeslice) and
// 1<<32 ran out of memory, a fatal error no recover catches.
func TestEventCapacityHuge(t *testing.T) {
	var reg *runtime.Registry
	if v := didPanic(func() {
		reg = runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithEventCapacity(math.MaxInt))
	}); v != nil {
		t.Fatalf("NewRegistry(WithEventCapacity(math.MaxInt)) panicked: %v", v)
	}
	b := reg.Breaker(runtime.Config{Name: "huge-log"})
	const n = 3000 // past the room made up front
	for range n {
		b.Isolate("x")
		b.Resume("y")
	}
	evs := reg.Events(math.MaxInt)
	if len(evs) != 2*n || evs[0].To != runtime.Closed || evs[len(evs)-1].To != runtime.Isolated {
		t.Errorf("got %d events, newest to %v; want %d, newest first", len(evs), evs[0].To, 2*n)
	}
}

// TestReleaseTokenOfNoCall: releasing a Token that admitted no call (the
// zero Token, or the one that came with Acquire's rejection, as in
// "tok, err := b.Acquire(ctx); defer b.Release(tok, err)") counts nothing,
// and a Token released on another breaker counts on its own. Both used to
// count failures that never happened: the totals grew, and a Token of one
// breaker tripped another.
func TestReleaseTokenOfNoCall(t *testing.T) {
	bg := context.Background()
	down := errors.New("down")
	reg, _ := newTestRegistry(t, runtime.WithCallCounts())
	a := reg.Breaker(runtime.Config{Name: "release-a", FailureThreshold: 1})
	b := reg.Breaker(runtime.Config{Name: "release-b", FailureThreshold: 2})

	var zero runtime.Token
	b.Release(zero, down)
	b.Record(zero, runtime.Failure, down)
	if st := b.Stats(); st.Failures != 0 || st.Successes != 0 {
		t.Errorf("the zero Token counted: %d failures, %d successes", st.Failures, st.Successes)
	}

	_ = a.Do(bg, func(context.Context) error { return down }) // a trips
	tok, err := a.Acquire(bg)
	if !errors.Is(err, runtime.ErrOpen) {
		t.Fatalf("Acquire on an OPEN breaker: %v, want ErrOpen", err)
	}
	a.Release(tok, err)
	a.Record(tok, runtime.Failure, err)
	if st := a.Stats(); st.Failures != 1 {
		t.Errorf("a rejected Token counted: %d failures, want the 1 real one", st.Failures)
	}

	c := reg.Breaker(runtime.Config{Name: "release-c", FailureThreshold: 1})
	tok, err = c.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	b.Release(tok, down) // c's Token, given to b
	if st := b.Stats(); st.Failures != 0 || st.State != runtime.Closed {
		t.Errorf("b counted c's Token: %d failures, state %v", st.Failures, st.State)
	}
	if st := c.Stats(); st.Failures != 1 || st.State != runtime.Open {
		t.Errorf("c: %d failures, state %v; want its call's failure to count on it and trip it", st.Failures, st.State)
	}
}

// TestZeroFamilyKey: the zero FamilyKey (a variable set only on some
// paths, then deferred) is safe everywhere: FamilyKey.Done did nothing on
// it, but Family.Exit and Breaker panicked.
func TestZeroFamilyKey(t *testing.T) {
	reg, _ := newTestRegistry(t)
	f := reg.Family(runtime.Config{Name: "zerokey"}, runtime.FamilyConfig{})
	var k runtime.FamilyKey
	for name, use := range map[string]func(){
		"Exit":    func() { f.Exit(k) },
		"Done":    func() { k.Done() },
		"Breaker": func() { _ = k.Breaker() },
	} {
		if v := didPanic(use); v != nil {
			t.Errorf("%s on the zero FamilyKey panicked: %v", name, v)
		}
	}
	if k.Breaker() != nil {
		t.Errorf("the zero FamilyKey has breaker %v, want nil", k.Breaker())
	}
}

// loopErr unwraps to itself: errors.Is and errors.As never return on it.
type loopErr struct{}

func (e *loopErr) Error() string { return "loop" }
func (e *loopErr) Unwrap() error { return e }

// TestSelfWrappingError: a call failing with an error that unwraps to
// itself counts as a failure and trips the breaker, CLOSED or HALF_OPEN.
// The breaker's own walks of the error (for a RetryAfter, for a panic)
// never ended: Do hung, and a failed probe hung holding the breaker's lock.
func TestSelfWrappingError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
		b := reg.Breaker(runtime.Config{Name: "loop", FailureThreshold: 1, ResetTimeout: time.Second})
		fail := func(context.Context) error { return &loopErr{} }
		for _, want := range []runtime.State{runtime.Open, runtime.Open} {
			done := make(chan error)
			go func() { done <- b.Do(context.Background(), fail) }()
			synctest.Wait()
			select {
			case err := <-done:
				if _, ok := err.(*loopErr); !ok {
					t.Errorf("Do returned %v, want the call's error", err)
				}
			default:
				t.Fatal("Do did not return: the walk of a self-wrapping error does not end")
			}
			if s := b.State(); s != want {
				t.Errorf("state %v, want %v", s, want)
			}
			time.Sleep(time.Second) // the OPEN period, in the bubble's time: the next call is a probe
			synctest.Wait()         // the timer's move to HALF_OPEN
		}
	})
}

// TestOptionsIgnoredWarn: an option that cannot apply says so once the
// registry is made, whichever order WithLogger comes in: WithConfig with
// a Config of no Name (it overrides no breaker: the settings went nowhere),
// WithRateLimit with a rate that is not positive or an empty name. They
// were ignored without a word.
func TestOptionsIgnoredWarn(t *testing.T) {
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithoutEnv(),
		runtime.WithConfig(runtime.Config{FailureThreshold: 3}, runtime.Config{Name: "named", FailureThreshold: 4}),
		runtime.WithRateLimit("a", math.NaN(), 3),
		runtime.WithRateLimit("b", -1, 3),
		runtime.WithRateLimit("", 2, 3),
		runtime.WithRateLimit("c", 2, 3),
		runtime.WithLogger(logs.logger()))
	out := logs.String()
	for _, want := range []string{
		"ignoring WithConfig's Config 0: it has no Name",
		`ignoring WithRateLimit(\"a\", NaN, 3)`,
		`ignoring WithRateLimit(\"b\", -1, 3)`,
		`ignoring WithRateLimit(\"\", 2, 3)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no warning %q in:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "level=WARN"); n != 4 {
		t.Errorf("%d warnings, want 4:\n%s", n, out)
	}
	if got := reg.Breaker(runtime.Config{Name: "named"}).Config().FailureThreshold; got != 4 {
		t.Errorf("the named Config's threshold: %d, want 4", got)
	}
	if r, _ := reg.Limiter("c", 0, 0).Rate(); r != 2 {
		t.Errorf("WithRateLimit(c, 2, 3): rate %v, want 2", r)
	}
}

// TestEnvNameNotUpperCase: a variable whose NAME is not written as the
// breakers' names map to it (lower case, or a '-', '.' or ':' kept) names
// no breaker: it is warned about, with the variable to write instead. It
// was ignored without a word.
func TestEnvNameNotUpperCase(t *testing.T) {
	env := []string{"BREAKER_eastmoney_THRESHOLD=3", "BREAKER_MARKET-DATA_RESET=60s", "BREAKER_Tdx_MODE=isolate"}
	restore := runtime.SetEnviron(env)
	defer restore()
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	out := logs.String()
	for _, want := range []string{"want BREAKER_EASTMONEY_THRESHOLD", "want BREAKER_MARKET_DATA_RESET", "want BREAKER_TDX_MODE"} {
		if !strings.Contains(out, want) {
			t.Errorf("no warning saying %q:\n%s", want, out)
		}
	}
	if b := reg.Breaker(runtime.Config{Name: "eastmoney"}); b.Config().FailureThreshold != 5 {
		t.Errorf("eastmoney's threshold %d: a variable the breaker's name does not map to applied", b.Config().FailureThreshold)
	}
}

// headerErr is pointer-shaped (one pointer field), so an interface holds
// it directly: with no header its interface's data word is nil, yet it is
// no typed nil, and its RetryAfter answers.
type headerErr struct{ hdr *fieldErr }

func (e headerErr) Error() string { return "banned" }
func (e headerErr) RetryAfter() time.Duration {
	if e.hdr == nil {
		return 30 * time.Second
	}
	return e.hdr.after
}

// TestCooldownOfPointerShapedError: a value whose interface data word is
// nil but which is not a nil pointer still asks for its cooldown.
func TestCooldownOfPointerShapedError(t *testing.T) {
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "shaped", FailureThreshold: 5})
	_ = b.Do(context.Background(), func(context.Context) error { return headerErr{} })
	if s := b.State(); s != runtime.Open {
		t.Errorf("state %v after an error asking for 30s, want OPEN", s)
	}
}

// TestLimiterBadInput: a limiter asked for by hand with an empty name is
// "default", as a Config's breaker is (so UpdateRateLimit("") finds none
// rather than a limiter no breaker uses); a NaN or negative rate, given
// to Limiter or a Family, means no limit and says so once; a negative
// Concurrency is none, and a Config reports it as 0.
func TestLimiterBadInput(t *testing.T) {
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(logs.logger()))
	if got := reg.Limiter("", 1, 1).Name(); got != "default" {
		t.Errorf(`Limiter("").Name() = %q, want "default"`, got)
	}
	if err := reg.UpdateRateLimit("", 2, 2); err == nil {
		t.Error(`UpdateRateLimit("") = nil, want an error: no limiter has that name`)
	}
	for range 2 {
		reg.Limiter("nan", math.NaN(), 1)
		reg.Family(runtime.Config{Name: "fam"}, runtime.FamilyConfig{Rate: -1})
	}
	for _, want := range []string{`Limiter(\"nan\"): rate NaN`, `Family(\"fam\"): rate -1`} {
		if n := strings.Count(logs.String(), want); n != 1 {
			t.Errorf("%d warnings with %s, want 1; log:\n%s", n, want, logs.String())
		}
	}
	if l := reg.Family(runtime.Config{Name: "fam"}, runtime.FamilyConfig{}).Limiter(); l != nil {
		t.Errorf("a family with rate -1 has a limiter: %v", l.Name())
	}
	if got := reg.Breaker(runtime.Config{Name: "c", Concurrency: -1}).Config().Concurrency; got != 0 {
		t.Errorf("Concurrency -1 reads back as %d, want 0 (none)", got)
	}
}

// TestHandMadeBreakerWithAKeysName: a breaker made by hand whose name is
// a family's key's ("users/admin" beside the family "users") is the one
// breaker that key goes through, and the family says so, once.
func TestHandMadeBreakerWithAKeysName(t *testing.T) {
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(logs.logger()))
	plain := reg.Breaker(runtime.Config{Name: "users/admin"})
	fam := reg.Family(runtime.Config{Name: "users"}, runtime.FamilyConfig{})
	for range 2 {
		if b := fam.Breaker("admin"); b != plain {
			t.Fatalf("the key's breaker is %p, the hand-made one %p", b, plain)
		}
	}
	fam.Breaker("guest")
	const want = `breaker[users/admin]: made by hand, it has the name of a key of family \"users\"`
	if n := strings.Count(logs.String(), want); n != 1 {
		t.Errorf("%d warnings with %s, want 1; log:\n%s", n, want, logs.String())
	}
	if strings.Contains(logs.String(), "users/guest") {
		t.Errorf("a key of its own is warned of:\n%s", logs.String())
	}
}

// TestEnvEmptyIsUnset: a variable set to nothing (a script exports one it
// leaves empty) is no variable: no warning, and the lower layer's value
// stays. An unknown key is still warned of, empty or not.
func TestEnvEmptyIsUnset(t *testing.T) {
	env := []string{"BREAKER_TDX_FAULT=", "BREAKER_TDX_THRESHOLD= ", "BREAKER_TDX_MODE=", "BREAKER_TDX_TRESHOLD="}
	restore := runtime.SetEnviron(env)
	defer restore()
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 3})
	out := logs.String()
	for _, v := range []string{"FAULT", "THRESHOLD=", "MODE"} {
		if strings.Contains(out, "BREAKER_TDX_"+v) {
			t.Errorf("a warning of the empty BREAKER_TDX_%s:\n%s", v, out)
		}
	}
	if !strings.Contains(out, "BREAKER_TDX_TRESHOLD") {
		t.Errorf("no warning of the unknown key BREAKER_TDX_TRESHOLD:\n%s", out)
	}
	if got := b.Config().FailureThreshold; got != 3 {
		t.Errorf("threshold %d, want the Config's 3", got)
	}
	if got := b.State(); got != runtime.Closed {
		t.Errorf("state %s: an empty MODE put the breaker in a mode", got)
	}
}
