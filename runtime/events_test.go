package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEventsRing(t *testing.T) {
	reg, clk := newTestRegistry(t, runtime.WithEventCapacity(5))
	b := reg.Breaker(runtime.Config{Name: "ring", FailureThreshold: 1, ResetTimeout: time.Second})
	assert.Empty(t, reg.Events(0))
	for range 4 { // each cycle: CLOSED>OPEN, OPEN>HALF_OPEN, HALF_OPEN>CLOSED
		trip(t, b)
		clk.Advance(time.Second)
		require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
	}
	evs := reg.Events(100)
	require.Len(t, evs, 5, "capped at the capacity")
	for i := 1; i < len(evs); i++ {
		assert.False(t, evs[i].Time.After(evs[i-1].Time), "newest first")
	}
	assert.Equal(t, runtime.Closed, evs[0].To)
	assert.Len(t, reg.Events(2), 2)
	assert.Len(t, reg.Events(-1), 5, "limit <= 0 means 50, capped at capacity")
}

func TestEventsDefaultLimit(t *testing.T) {
	reg, clk := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "many", FailureThreshold: 1, ResetTimeout: time.Second})
	for range 40 {
		trip(t, b)
		clk.Advance(time.Second)
		require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
	}
	assert.Len(t, reg.Events(0), 50)
	assert.Len(t, reg.Events(1000), 100, "capacity 100 by default")
}

func TestReasonCappedAt200(t *testing.T) {
	reg, _ := newTestRegistry(t, runtime.WithCallCounts())
	b := reg.Breaker(runtime.Config{Name: "long", FailureThreshold: 1})
	// The panic is recorded as "panic: <value>" (API moved: PanicError is
	// no longer exported, so the panic itself makes the reason).
	assert.Panics(t, func() {
		_ = b.Do(context.Background(), func(context.Context) error { panic(strings.Repeat("数据", 300)) })
	})
	r := reg.Events(1)[0].Reason
	assert.LessOrEqual(t, len([]rune(r)), 200)
	assert.True(t, strings.HasPrefix(r, "panic: 数据"))
}
