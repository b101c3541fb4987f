package runtime_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// TestEnterFast: EnterFast admits exactly the calls that need nothing but
// a CLOSED breaker, and declines every other, leaving the decision to
// Enter; what it admits settles through Exit like any call.
func TestEnterFast(t *testing.T) {
	defer runtime.ForgetCallStates()()
	reg, clk := newTestRegistry(t)
	cfg := runtime.Config{Name: "fast", FailureThreshold: 2, ResetTimeout: 10}
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: cfg})
	ctx := context.Background()

	exit := func(call breakerimpl.Call, err error) { call.Exit(ctx, &err) }
	call, ok := rt.EnterFast()
	require.True(t, ok, "a CLOSED breaker with no limiter, budget or provenance in play")
	exit(call, errUpstream)
	assert.Equal(t, 1, rt.Breaker().Stats().ConsecutiveFailures, "its outcome counts")
	call, ok = rt.EnterFast()
	require.True(t, ok)
	exit(call, nil)
	assert.Zero(t, rt.Breaker().Stats().ConsecutiveFailures, "a success clears the count")

	limited := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "limited"}, Rate: 1, Burst: 1})
	_, ok = limited.EnterFast()
	assert.False(t, ok, "a call that must wait for a token")

	trip(t, rt.Breaker())
	_, ok = rt.EnterFast()
	assert.False(t, ok, "OPEN")
	clk.Advance(10)
	require.Equal(t, runtime.HalfOpen, rt.Breaker().State())
	_, ok = rt.EnterFast()
	assert.False(t, ok, "HALF_OPEN: a probe needs a slot")
	call, err := rt.Enter(ctx)
	require.NoError(t, err)
	exit(call, nil)
	require.Equal(t, runtime.Closed, rt.Breaker().State())

	_ = runtime.WithBudget(ctx, 1) // from now on every call may carry one
	_, ok = rt.EnterFast()
	assert.False(t, ok, "budgets are in use: Enter must look in the ctx")
	_, err = rt.Enter(runtime.WithBudget(ctx, 0))
	assert.True(t, errors.Is(err, runtime.ErrBudget), "and Enter does: %v", err)
}

// TestEnterFastInlines: EnterFast is only worth its place in generated code
// if the compiler inlines it; a change that pushes it over the inlining
// budget would slow every wrapper silently, so it fails here instead.
func TestEnterFastInlines(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goBin, "build", "-gcflags=-m", "-o", os.DevNull, "./breakerimpl").CombinedOutput()
	require.NoError(t, err, "%s", out)
	if !strings.Contains(string(out), "can inline (*Route).EnterFast") {
		t.Errorf("EnterFast does not inline; the compiler says:\n%s", grepLines(string(out), "EnterFast"))
	}
}

func grepLines(s, sub string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestPeriodWrapKeepsLimiter: after 2^32 transitions the period counter
// wraps; it skips 0, so that no state word is 0 and EnterFast, which lets a
// call of a limited route through only when the word is 0, never skips the
// limiter.
func TestPeriodWrapKeepsLimiter(t *testing.T) {
	defer runtime.ForgetCallStates()()
	reg, _ := newTestRegistry(t)
	rt := breakerimpl.NewRoute(reg, anyImpl, breakerimpl.RouteConfig{Breaker: runtime.Config{Name: "wrap"}, Rate: 1, Burst: 1, MaxWait: time.Millisecond})
	b := rt.Breaker()
	b.SetPeriod(1<<32 - 1)
	b.Reset() // the next period would be 0
	require.Equal(t, runtime.Closed, b.State())
	_, ok := rt.EnterFast()
	assert.False(t, ok, "a limited route must wait for its token")
	ctx := context.Background()
	call, err := rt.Enter(ctx)
	require.NoError(t, err, "the burst's token")
	call.Exit(ctx, new(error))
	_, err = rt.Enter(ctx)
	assert.ErrorIs(t, err, runtime.ErrRateLimited, "the limiter still decides")
}
