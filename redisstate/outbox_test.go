package redisstate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// burstWithin is how long a peer may take to follow a burst of a
// thousand pieces of news, one round trip each, on a loaded two-core
// machine under -race: generous, as the test ends as soon as they are in.
const burstWithin = 30 * time.Second

// TestBurstOfTripsReachesPeers: an outage trips a thousand keys of a
// family at once, with Redis healthy. Every trip reaches the peer: the
// publisher's queue held 256 and dropped the rest, so that the peer
// opened 258 keys of the 1,000 and the others only when an outage made it
// resync.
func TestBurstOfTripsReachesPeers(t *testing.T) {
	const keys = 1000
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", time.Minute)
	b := attach(t, newClient(t, s), "b", time.Minute)
	fa, fb := a.family(keys), b.family(keys)
	for i := range keys {
		fa.Breaker(fmt.Sprint(i))
		fb.Breaker(fmt.Sprint(i))
	}

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < keys; i += 4 {
				_ = fa.Breaker(fmt.Sprint(i)).Do(context.Background(), func(context.Context) error { return errBanned })
			}
		})
	}
	wg.Wait()
	require.Equal(t, keys, fa.Health().Open, "a tripped every key")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, keys, fb.Health().Open, "keys b opened")
	}, burstWithin, 10*time.Millisecond)
}

// TestBurstOfModesReachesPeers: an operator's script isolates 600
// breakers at once, with Redis healthy. Every mode reaches the peer: 256
// did, and the others were marked to be written at a resync that only an
// outage brings.
func TestBurstOfModesReachesPeers(t *testing.T) {
	const n = 600
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", time.Minute)
	b := attach(t, newClient(t, s), "b", time.Minute)
	for i := range n {
		cfg := runtime.Config{Name: fmt.Sprint("em", i), FailureThreshold: 1, ResetTimeout: time.Minute}
		a.reg.Breaker(cfg)
		b.reg.Breaker(cfg)
	}

	for _, br := range a.reg.Breakers() {
		br.Isolate("maintenance")
	}
	isolated := func() (n int) {
		for _, br := range b.reg.Breakers() {
			if br.State() == runtime.Isolated {
				n++
			}
		}
		return n
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, n+1, isolated(), "breakers b isolated (with tdx)")
	}, burstWithin, 10*time.Millisecond)
}
