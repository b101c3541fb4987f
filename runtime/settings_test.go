package runtime_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunTimeSettings(t *testing.T) {
	var logs logBuffer
	restore := runtime.SetEnviron([]string{
		"BREAKER_EASTMONEY_THRESHOLD=4",
		"BREAKER_EASTMONEY_RESET=120", // seconds, as the origin story writes it
		"BREAKER_TDX_RESET=2m",
		"BREAKER_A_B_HALFOPEN=3", // a-b and a_b share variables
		"BREAKER_TENCENT_RATELIMIT=2/4",
		"BREAKER_TDX_THRESHOLD=many", // malformed: warned, ignored
		"BREAKER_TDX_COLOUR=blue",    // unknown key: warned
		"PATH=/usr/bin",
	})
	defer restore()
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()),
		runtime.WithConfig(runtime.Config{Name: "eastmoney", ResetTimeout: time.Minute}),
		runtime.WithRateLimit("push2ex", 1, 1))

	em := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 5, ResetTimeout: 30 * time.Second})
	assert.Equal(t, 4, em.Config().FailureThreshold, "environment over annotation")
	assert.Equal(t, time.Minute, em.Config().ResetTimeout, "WithConfig over environment")
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 5})
	assert.Equal(t, 2*time.Minute, tdx.Config().ResetTimeout)
	assert.Equal(t, 5, tdx.Config().FailureThreshold, "a malformed value keeps the lower layer")
	assert.Equal(t, 3, reg.Breaker(runtime.Config{Name: "a-b"}).Config().HalfOpenMax)

	tencent := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "tencent"}, Rate: 10, Burst: 10})
	rate, burst := tencent.Limiter().Rate()
	assert.Equal(t, 2.0, rate)
	assert.Equal(t, 4, burst)
	push := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "push2ex"}})
	require.NotNil(t, push.Limiter(), "an override may limit a name the annotations left unlimited")

	out := logs.String()
	assert.Contains(t, out, "BREAKER_TDX_THRESHOLD")
	assert.Contains(t, out, "BREAKER_TDX_COLOUR")
	assert.Equal(t, 2, strings.Count(out, "level=WARN"), out)

	quiet := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()))
	assert.Equal(t, 5, quiet.Breaker(runtime.Config{Name: "eastmoney"}).Config().FailureThreshold)
}

// TestWithConfigNamesOneBreaker: WithConfig and WithRateLimit override
// the breaker of that name exactly; "a-b" and "a_b" share only their
// environment variables (SPEC §5), which the code layer is not.
func TestWithConfigNamesOneBreaker(t *testing.T) {
	restore := runtime.SetEnviron([]string{"BREAKER_A_B_HALFOPEN=3"})
	defer restore()
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()),
		runtime.WithConfig(runtime.Config{Name: "a-b", FailureThreshold: 2}),
		runtime.WithRateLimit("a.b", 1, 1))
	ab := reg.Breaker(runtime.Config{Name: "a-b", FailureThreshold: 5})
	assert.Equal(t, 2, ab.Config().FailureThreshold, "its own WithConfig")
	for _, name := range []string{"a_b", "a:b", "A-B"} {
		other := reg.Breaker(runtime.Config{Name: name, FailureThreshold: 5})
		assert.Equal(t, 5, other.Config().FailureThreshold, "%s: a-b's WithConfig is not its", name)
		assert.Equal(t, 3, other.Config().HalfOpenMax, "%s: the environment's variables are shared", name)
	}
	rate, _ := reg.Limiter("a.b", 0, 0).Rate()
	assert.Equal(t, 1.0, rate, "WithRateLimit's own name")
	for _, name := range []string{"a-b", "a_b"} {
		rate, _ := reg.Limiter(name, 0, 0).Rate()
		assert.True(t, math.IsInf(rate, 1), "%s: a.b's rate limit is not its (rate %v)", name, rate)
	}
}

// TestWindowLoadSettings: the settings of SPEC sections 8 and 9 go through
// the same layers as the others (WithConfig, then the environment, then the
// annotation), and a window is one setting whichever form a layer gives.
func TestWindowLoadSettings(t *testing.T) {
	annotated := runtime.Config{Name: "eastmoney", WindowCalls: 100, FailureRate: 0.5, MinimumCalls: 20,
		SlowCall: time.Second, SlowRate: 0.5, InFlight: time.Minute, Concurrency: 4, Throttle: 2}
	tests := []struct {
		name string
		env  []string
		code []runtime.Config
		want runtime.Config
	}{
		{name: "annotation alone", want: annotated},
		{
			name: "environment over annotation",
			env: []string{
				"BREAKER_EASTMONEY_WINDOW=60s", "BREAKER_EASTMONEY_FAILRATE=25%", "BREAKER_EASTMONEY_MINIMUM=10",
				"BREAKER_EASTMONEY_SLOW=2", "BREAKER_EASTMONEY_SLOWRATE=0.8", "BREAKER_EASTMONEY_INFLIGHT=30s",
				"BREAKER_EASTMONEY_CONCURRENCY=8", "BREAKER_EASTMONEY_THROTTLE=1.5",
			},
			want: runtime.Config{Name: "eastmoney", WindowPeriod: time.Minute, FailureRate: 0.25, MinimumCalls: 10,
				SlowCall: 2 * time.Second, SlowRate: 0.8, InFlight: 30 * time.Second, Concurrency: 8, Throttle: 1.5},
		},
		{
			name: "WithConfig over environment, field by field",
			env:  []string{"BREAKER_EASTMONEY_WINDOW=60s", "BREAKER_EASTMONEY_FAILRATE=0.3"},
			code: []runtime.Config{{Name: "eastmoney", WindowCalls: 200, Throttle: 3}},
			want: runtime.Config{Name: "eastmoney", WindowCalls: 200, FailureRate: 0.3, MinimumCalls: 20,
				SlowCall: time.Second, SlowRate: 0.5, InFlight: time.Minute, Concurrency: 4, Throttle: 3},
		},
		{
			name: "a count window replaces a time window",
			env:  []string{"BREAKER_EASTMONEY_WINDOW=500"},
			code: []runtime.Config{{Name: "eastmoney", WindowPeriod: 2 * time.Minute}, {Name: "eastmoney", WindowCalls: 50}},
			want: func() runtime.Config { c := annotated; c.WindowCalls = 50; return c }(),
		},
		{
			name: "the later WithConfig wins",
			code: []runtime.Config{{Name: "eastmoney", Concurrency: 2, SlowRate: 0.9}, {Name: "eastmoney", Concurrency: 3}},
			want: func() runtime.Config { c := annotated; c.Concurrency, c.SlowRate = 3, 0.9; return c }(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			restore := runtime.SetEnviron(tt.env)
			defer restore()
			reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithConfig(tt.code...))
			assert.Equal(t, tt.want, reg.Settle(annotated))
			b := reg.Breaker(annotated)
			got := b.Config()
			got.FailureThreshold, got.ResetTimeout, got.HalfOpenMax, got.SuccessThreshold = 0, 0, 0, 0
			assert.Equal(t, tt.want, got, "the breaker is created with the settled config")
		})
	}
}

// TestEnvWindowOnly: a window from the environment alone turns on a
// window for a name the annotation gave none, and leaves the threshold
// "not given" (zero) for the defaults to decide, as SPEC section 8 asks.
func TestEnvWindowOnly(t *testing.T) {
	restore := runtime.SetEnviron([]string{"BREAKER_TDX_WINDOW=100", "BREAKER_A_B_INFLIGHT=45"})
	defer restore()
	reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()))
	got := reg.Settle(runtime.Config{Name: "tdx", ResetTimeout: time.Minute})
	assert.Equal(t, runtime.Config{Name: "tdx", ResetTimeout: time.Minute, WindowCalls: 100}, got)
	assert.Equal(t, 45*time.Second, reg.Settle(runtime.Config{Name: "a.b"}).InFlight, "seconds, and . as _")
	assert.Equal(t, runtime.Config{Name: "other"}, reg.Settle(runtime.Config{Name: "other"}))
}

// TestEnvWindowLoadMalformed: every malformed value is warned about once,
// naming the variable, and the lower layer's value stays.
func TestEnvWindowLoadMalformed(t *testing.T) {
	env := []string{
		"BREAKER_TDX_WINDOW=5",           // under 10 calls
		"BREAKER_TDX_FAILRATE=150%",      // over 100%
		"BREAKER_TDX_MINIMUM=0",          // under 1
		"BREAKER_TDX_SLOW=fast",          // not a duration
		"BREAKER_TDX_SLOWRATE=0",         // under 1%
		"BREAKER_TDX_INFLIGHT=-1s",       // not positive
		"BREAKER_TDX_CONCURRENCY=lots",   // not a number
		"BREAKER_TDX_THROTTLE=0.5",       // under 1
		"BREAKER_TDX_SLOWRATE_MAX=1",     // unknown key
		"BREAKER_X_SLOW_SLOWRATE=50%",    // fine: name X_SLOW
		"BREAKER_TDX_RESET=2m",           // fine
		"BREAKER_TDX_WINDOW_SIZE=100",    // unknown key
		"BREAKER_TDX_FAILRATE_LIMIT=50%", // unknown key
	}
	restore := runtime.SetEnviron(env)
	defer restore()
	annotated := runtime.Config{Name: "tdx", WindowPeriod: time.Minute, FailureRate: 0.4, MinimumCalls: 30,
		SlowCall: time.Second, SlowRate: 0.6, InFlight: time.Minute, Concurrency: 2, Throttle: 2}
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	want := annotated
	want.ResetTimeout = 2 * time.Minute
	assert.Equal(t, want, reg.Settle(annotated))
	assert.Equal(t, 0.5, reg.Settle(runtime.Config{Name: "x-slow"}).SlowRate)

	out := logs.String()
	for _, kv := range env {
		v, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(v, "BREAKER_X_") || v == "BREAKER_TDX_RESET" {
			assert.NotContains(t, out, v)
			continue
		}
		assert.Equal(t, 1, strings.Count(out, "variable="+v+"\n"), "%s warned once:\n%s", v, out)
	}
	for _, msg := range []string{"at least 10 calls", "percentage from 1% to 100% or a fraction", "want a number >= 1", "want one of"} {
		assert.Contains(t, out, msg)
	}
	runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	assert.Equal(t, out, logs.String(), "a second registry warns about nothing new")
}

// TestSettingsNeverIgnoredSilently: a value the runtime cannot use is a
// warning naming it, never dropped or cut without a word (SPEC §5): a
// window's rate or minimum for a breaker that no layer gives a window, a
// count window past the largest, a WithRateLimit of +Inf (which would
// lift the annotation's limit).
func TestSettingsNeverIgnoredSilently(t *testing.T) {
	restore := runtime.SetEnviron([]string{
		"BREAKER_WINDOWLESS_FAILRATE=50%", "BREAKER_WINDOWLESS_MINIMUM=5",
		"BREAKER_WINDOWLESS_SLOW=1s", "BREAKER_WINDOWLESS_SLOWRATE=0.5",
		"BREAKER_WINDOWED_FAILRATE=40%", // its annotation has a window: used
		"BREAKER_HUGE_WINDOW=1048577",
	})
	defer restore()
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()), runtime.WithRateLimit("unlimited", math.Inf(1), 1))
	reg.Breaker(runtime.Config{Name: "windowless"})
	reg.Breaker(runtime.Config{Name: "windowless"}) // the same breaker: warned once
	windowed := reg.Breaker(runtime.Config{Name: "windowed", WindowCalls: 100})
	assert.Equal(t, 0.4, windowed.Config().FailureRate)
	assert.Same(t, windowed, reg.Breaker(runtime.Config{Name: "windowed"}), "asked again, without the window: the breaker as made")
	huge := reg.Breaker(runtime.Config{Name: "huge", WindowCalls: 100})
	assert.Equal(t, 100, huge.Config().WindowCalls, "the annotation's window stays")
	limited := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "unlimited"}, Rate: 10, Burst: 10})
	rate, _ := limited.Limiter().Rate()
	assert.Equal(t, 10.0, rate, "the annotation's limit stays")

	out := logs.String()
	for _, v := range []string{"BREAKER_WINDOWLESS_FAILRATE", "BREAKER_WINDOWLESS_MINIMUM", "BREAKER_WINDOWLESS_SLOW", "BREAKER_WINDOWLESS_SLOWRATE", "BREAKER_HUGE_WINDOW"} {
		assert.Equal(t, 1, strings.Count(out, "variable="+v+"\n"), "%s warned once:\n%s", v, out)
	}
	assert.Contains(t, out, `breaker \"windowless\" has no window`)
	assert.Contains(t, out, "above the largest count window")
	assert.Contains(t, out, `ignoring WithRateLimit(\"unlimited\", +Inf, 1)`)
	assert.NotContains(t, out, "BREAKER_WINDOWED_FAILRATE")

	// A Fallback without a Name: its breaker "fallback:" would be shared
	// by every nameless one without a word.
	breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: breakerimpl.FallbackName("")}})
	breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: breakerimpl.FallbackName("")}})
	assert.Equal(t, 1, strings.Count(logs.String(), "without a Name"), "warned once:\n%s", logs.String())
}

// TestWithConfigOff: a zero field keeps the lower layer's value, so
// Config.Off says "none": WithConfig turns off an annotated (or
// environment's) window, bulkhead and throttle, and of two WithConfig for
// one name the later wins, Off or value.
func TestWithConfigOff(t *testing.T) {
	annotated := runtime.Config{Name: "eastmoney", WindowCalls: 100, FailureRate: 0.3, SlowCall: time.Second,
		InFlight: time.Minute, Concurrency: 4, Throttle: 2, ResetTimeout: time.Minute, ResetMax: time.Hour}
	for _, tt := range []struct {
		name  string
		env   []string
		code  []runtime.Config
		check func(t *testing.T, c runtime.Config)
	}{
		{"off", []string{"BREAKER_EASTMONEY_WINDOW=60s"},
			[]runtime.Config{{Name: "eastmoney", Off: runtime.SettingWindow | runtime.SettingConcurrency | runtime.SettingThrottle | runtime.SettingBackoff}},
			func(t *testing.T, c runtime.Config) {
				assert.Zero(t, c.WindowCalls)
				assert.Zero(t, c.WindowPeriod, "the environment's window too")
				assert.Zero(t, c.FailureRate, "and what needs a window")
				assert.Zero(t, c.SlowCall)
				assert.Equal(t, time.Minute, c.InFlight, "what Off does not name stays")
				assert.Zero(t, c.Concurrency)
				assert.Zero(t, c.Throttle)
				assert.Zero(t, c.ResetMax)
				assert.Equal(t, runtime.DefaultFailureThreshold, c.FailureThreshold, "no window: the default threshold")
				assert.Zero(t, c.Off, "applied, not kept")
			}},
		{"a later value wins over Off", nil,
			[]runtime.Config{{Name: "eastmoney", Off: runtime.SettingConcurrency}, {Name: "eastmoney", Concurrency: 2}},
			func(t *testing.T, c runtime.Config) { assert.Equal(t, 2, c.Concurrency) }},
		{"a later Off wins over a value", nil,
			[]runtime.Config{{Name: "eastmoney", Concurrency: 2}, {Name: "eastmoney", Off: runtime.SettingConcurrency}},
			func(t *testing.T, c runtime.Config) { assert.Zero(t, c.Concurrency) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			restore := runtime.SetEnviron(tt.env)
			defer restore()
			reg := runtime.NewRegistry(runtime.WithLogger(discardLogger()), runtime.WithConfig(tt.code...))
			tt.check(t, reg.Breaker(annotated).Config())
		})
	}
}

// TestEnvZeroTurnsOff: a variable whose value may be zero gives that zero
// like any value (SPEC §5: the environment over the annotation), instead
// of reading as "not given" and leaving the lower layer's value without a
// word: BREAKER_<NAME>_JITTER=0% turns an annotated jitter off and
// BREAKER_<NAME>_FAULT=0 a lower layer's fault injection; WithConfig
// still wins over both.
func TestEnvZeroTurnsOff(t *testing.T) {
	restore := runtime.SetEnviron([]string{
		"BREAKER_J_PCT_JITTER=0%", "BREAKER_J_FRAC_JITTER=0", "BREAKER_J_SOME_JITTER=5%", "BREAKER_J_CODE_JITTER=0%",
		"BREAKER_F_PCT_FAULT=0%", "BREAKER_F_FRAC_FAULT=0", "BREAKER_F_SOME_FAULT=10%", "BREAKER_F_CODE_FAULT=0",
	})
	defer func() { restore() }()
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()), runtime.WithRand(injectRand()),
		runtime.WithConfig(runtime.Config{Name: "j-code", ResetJitter: 0.2}, runtime.Config{Name: "f-code", Fault: 0.25}))

	for name, want := range map[string]float64{"j-pct": 0, "j-frac": 0, "j-some": 0.05, "j-code": 0.2} {
		b := reg.Breaker(runtime.Config{Name: name, ResetJitter: 0.3})
		assert.Equal(t, want, b.Config().ResetJitter, name)
	}
	for name, want := range map[string]float64{"f-pct": 0, "f-frac": 0, "f-some": 0.1, "f-code": 0.25} {
		b := reg.Breaker(runtime.Config{Name: name, Fault: 0.5})
		assert.Equal(t, want, b.Config().Fault, name)
		assert.Equal(t, want, b.Stats().Fault, name)
	}
	off := reg.Breaker(runtime.Config{Name: "f-pct"})
	for range 20 {
		require.NoError(t, off.Do(t.Context(), func(context.Context) error { return nil }), "no fault is injected")
	}
	assert.Empty(t, logs.String(), "valid values: no warning")

	// The other variables refuse a zero (a count, a duration, a rate of at
	// least 1%, K >= 1, a delay) with a warning: none reads as "not given"
	// without a word.
	restore()
	restore = runtime.SetEnviron([]string{"BREAKER_Z_THRESHOLD=0", "BREAKER_Z_RESET=0", "BREAKER_Z_FAILRATE=0%",
		"BREAKER_Z_THROTTLE=0", "BREAKER_Z_LATENCY=0", "BREAKER_Z_RATELIMIT=0/1"})
	var warned logBuffer
	runtime.NewRegistry(runtime.WithLogger(warned.logger()))
	for _, v := range []string{"THRESHOLD", "RESET", "FAILRATE", "THROTTLE", "LATENCY", "RATELIMIT"} {
		assert.Contains(t, warned.String(), "variable=BREAKER_Z_"+v+"\n", v)
	}
}
