package runtime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/breakergen/breakergen/runtime"
)

func TestRegistryFirstConfigWins(t *testing.T) {
	var logs logBuffer
	reg := runtime.NewRegistry(runtime.WithLogger(logs.logger()))
	a := reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 5})
	b := reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 5, ResetTimeout: 30 * time.Second})
	assert.Same(t, a, b, "same settings after defaults: same breaker, no warning")
	assert.Empty(t, logs.String())

	c := reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 9})
	d := reg.Breaker(runtime.Config{Name: "tencent", FailureThreshold: 9})
	assert.Same(t, a, c)
	assert.Same(t, a, d)
	assert.Equal(t, 5, c.Config().FailureThreshold)
	assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), "one warning per differing config: %s", logs.String())

	got, ok := reg.Lookup("tencent")
	assert.True(t, ok)
	assert.Same(t, a, got)
	_, ok = reg.Lookup("missing")
	assert.False(t, ok)
}

func TestRegistryDefaultsAndBadInput(t *testing.T) {
	reg := runtime.NewRegistry(nil, runtime.WithClock(nil), runtime.WithLogger(nil), runtime.WithEventCapacity(0), runtime.OnStateChange(nil))
	b := reg.Breaker(runtime.Config{FailureThreshold: -3, ResetTimeout: -time.Second})
	assert.Equal(t, runtime.Config{Name: "default", FailureThreshold: 5, ResetTimeout: 30 * time.Second, HalfOpenMax: 1, SuccessThreshold: 1}, b.Config())
	l := reg.Limiter("x", -1, 0)
	r, burst := l.Rate()
	assert.True(t, r > 1e300, "a non-positive rate means no limit")
	assert.Equal(t, 1, burst)
	assert.Same(t, runtime.Default(), runtime.Default())
	assert.Empty(t, reg.Events(10))
}

func TestBreakersInNameOrder(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, n := range []string{"tencent", "eastmoney", "tdx", "push2ex"} {
		reg.Breaker(runtime.Config{Name: n})
	}
	var names []string
	for _, b := range reg.Breakers() {
		names = append(names, b.Name())
	}
	assert.Equal(t, []string{"eastmoney", "push2ex", "tdx", "tencent"}, names)
}

func (e *statusError) Error() string { return "upstream answered " + http(e.code) }

func (emptyError) Error() string { return "" }
