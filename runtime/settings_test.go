package runtime_test

import (
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
