package testkit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/breakergen/breakergen/runtime"
)

func TestRegistryOnItsClock(t *testing.T) {
	reg, clk := Registry(t, runtime.WithoutEnv())
	b := reg.Breaker(runtime.Config{Name: "k", FailureThreshold: 2, ResetTimeout: time.Second})
	Trip(t, b)
	assert.Equal(t, T0, reg.Events(1)[0].Time, "the trip happened at the clock's time")
	clk.Advance(time.Second)
	assert.Equal(t, runtime.HalfOpen, b.State())
}
