package testkit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAdvanceFiresDueTimersInOrder(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	c := New(t0)
	var fired []time.Duration
	record := func() { fired = append(fired, c.Now().Sub(t0)) }
	c.AfterFunc(2*time.Second, record)
	c.AfterFunc(time.Second, record)
	stopped := c.AfterFunc(1500*time.Millisecond, record)
	c.AfterFunc(time.Minute, record)
	assert.True(t, stopped.Stop())
	assert.False(t, stopped.Stop(), "a stopped timer stops once")

	c.Advance(3 * time.Second)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, fired, "each at its own instant, the stopped one never")
	assert.Equal(t, t0.Add(3*time.Second), c.Now())
}
