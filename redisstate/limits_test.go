package redisstate_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

func TestSharedLimitRefusalTakesNoToken(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", time.Minute, redisstate.WithSharedLimits("em"))
	b := attach(t, newClient(t, s), "b", time.Minute, redisstate.WithSharedLimits("em"))
	rdb := newClient(t, s)
	ctx := context.Background()
	tat := func() string { return rdb.Get(ctx, "breakergen:rate:em").Val() }

	require.NoError(t, a.reg.Limiter("em", 1, 1).Wait(ctx, 0), "the burst")
	before := tat()
	require.NotEmpty(t, before)
	lim := b.reg.Limiter("em", 1, 1)
	var rl *runtime.RateLimitError
	require.ErrorAs(t, lim.Wait(ctx, 100*time.Millisecond), &rl, "the fleet's token is a second away")
	assert.Equal(t, "em", rl.Name)
	assert.Equal(t, before, tat(), "a refusal takes nothing")

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, lim.Wait(short, 0), runtime.ErrRateLimited, "not before the deadline")
	assert.Equal(t, before, tat())

	gone, cancel := context.WithCancel(ctx)
	go func() {
		// The waiter has reserved the next token when the TAT moves (Redis
		// is the only one to say so): end its wait, and the token goes back.
		for tat() == before {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	require.ErrorIs(t, lim.Wait(gone, 0), context.Canceled)
	require.Eventually(t, func() bool { return tat() == before }, within, time.Millisecond, "given back")
}

func TestLocalShareWhileRedisIsAway(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		share float64
		ok    bool // whether the second token comes within 150ms
	}{{1, true}, {0.5, false}} {
		m := attach(t, rdb, "a", time.Minute, redisstate.WithSharedLimits("em"), redisstate.WithLocalShare(tc.share),
			redisstate.WithTimeout(redisstate.DefaultTimeout)) // nothing to wait for
		lim := m.reg.Limiter("em", 10, 1)
		require.NoError(t, lim.Wait(ctx, 0))
		err := lim.Wait(ctx, 150*time.Millisecond) // 100ms away at 10/s, 200ms at 5/s
		if tc.ok {
			assert.NoError(t, err, "share %g", tc.share)
		} else {
			assert.ErrorIs(t, err, runtime.ErrRateLimited, "share %g", tc.share)
		}
	}
}

// TestLocalBucketFollowsTheRate: while Redis is away, a shared name's
// local bucket follows the limiter's rate and burst as UpdateRateLimit
// changes them, as the limiter without a fleet does, and keeps the tokens
// it holds: a larger burst hands out none at once, a smaller one cuts
// them.
func TestLocalBucketFollowsTheRate(t *testing.T) {
	s := startServer(t, "")
	m := attach(t, newClient(t, s), "a", time.Minute, redisstate.WithSharedLimits("em"),
		redisstate.WithTimeout(redisstate.DefaultTimeout)) // nothing to wait for once killed
	ctx := context.Background()
	lim := m.reg.Limiter("em", 0.1, 1) // a token every 10s
	s.kill()
	require.NoError(t, lim.Wait(ctx, 0), "the burst")
	require.Equal(t, "down", m.reg.Health().Fleet.Redis, "the local bucket decides from now on")
	require.ErrorIs(t, lim.Wait(ctx, 100*time.Millisecond), runtime.ErrRateLimited, "the next token is 10s away")

	require.NoError(t, m.reg.UpdateRateLimit("em", 0.1, 5))
	require.ErrorIs(t, lim.Wait(ctx, 100*time.Millisecond), runtime.ErrRateLimited, "a larger burst is no new tokens")

	require.NoError(t, m.reg.UpdateRateLimit("em", 1000, 1000))
	for i := range 20 {
		require.NoError(t, lim.Wait(ctx, 100*time.Millisecond), "call %d: at 1000/s a token is a millisecond away", i)
	}

	require.NoError(t, m.reg.UpdateRateLimit("em", 0.1, 1))
	admitted := 0
	for range 3 {
		if lim.Wait(ctx, 100*time.Millisecond) == nil {
			admitted++
		}
	}
	assert.LessOrEqual(t, admitted, 1, "the tokens held are cut to the new burst")
}

func TestProbeLease(t *testing.T) {
	s := startServer(t, "")
	rdb := newClient(t, s)
	ctx := context.Background()
	const reset = 100 * time.Millisecond

	t.Run("a dead holder's lease expires", func(t *testing.T) {
		m := attach(t, newClient(t, s), "a", reset, redisstate.WithPrefix("dead:"))
		require.NoError(t, rdb.Set(ctx, "dead:probe:{tdx}", "ghost", 600*time.Millisecond).Err())
		tripBy(t, m.tdx())
		opened := time.Now()
		require.Eventually(t, func() bool { return m.tdx().State() == runtime.HalfOpen }, within, time.Millisecond)
		assert.Greater(t, time.Since(opened), 400*time.Millisecond, "not before the ghost's lease ran out")
	})
	t.Run("the lease lasts as long as the probe may run", func(t *testing.T) {
		// A route whose timeout is longer than the reset window lets its
		// probe run that long: the lease must not run out first, or a
		// second process would probe meanwhile.
		m := attach(t, newClient(t, s), "a", reset, redisstate.WithPrefix("hold:"))
		breakerimpl.NewRoute(m.reg, struct{}{}, breakerimpl.RouteConfig{
			Breaker: runtime.Config{Name: "tdx"}, Timeout: time.Minute})
		assert.Equal(t, time.Minute, m.tdx().ProbeWindow())
		tripBy(t, m.tdx())
		require.Eventually(t, func() bool { return m.tdx().State() == runtime.HalfOpen }, within, time.Millisecond)
		ttl := rdb.PTTL(ctx, "hold:probe:{tdx}").Val()
		assert.Greater(t, ttl, 30*time.Second, "the lease is held for the route's timeout, not the %s reset", reset)
	})
	t.Run("a recovered fleet closes a late window", func(t *testing.T) {
		// b tripped the fleet; its probe's success message was lost, but
		// its closed mark is there when a's window ends.
		m := attach(t, newClient(t, s), "a", reset, redisstate.WithPrefix("late:"))
		require.NoError(t, rdb.Set(ctx, "late:open:tdx", `{"v":1,"origin":"b","reason":"banned"}`, 300*time.Millisecond).Err())
		require.NoError(t, rdb.Publish(ctx, "late:events",
			`{"v":1,"kind":"open","name":"tdx","origin":"b","reason":"banned","ms":300}`).Err())
		require.Eventually(t, func() bool { return m.tdx().State() == runtime.Open }, within, time.Millisecond)
		require.NoError(t, rdb.Set(ctx, "late:closed:{tdx}", "b", time.Minute).Err())
		require.Eventually(t, func() bool { return m.tdx().State() == runtime.Closed }, within, time.Millisecond)
		// The event is logged after the transition, outside its lock: a
		// look right after the state changed may come before it.
		require.Eventually(t, func() bool {
			return m.reg.Events(1)[0].Reason == "peer b: probe succeeded, recovered"
		}, within, time.Millisecond, "the newest event is the close's")
	})
}

// TestRefundGivesBackTheSharedToken: a token a shared limiter took from
// the fleet's bucket for a call that was then not made (Limiter.Refund,
// as a route does when the bulkhead or the budget refuses the call) goes
// back to the fleet's bucket, where a peer can take it.
func TestRefundGivesBackTheSharedToken(t *testing.T) {
	s := startServer(t, "")
	a := attach(t, newClient(t, s), "a", time.Minute, redisstate.WithSharedLimits("em"))
	b := attach(t, newClient(t, s), "b", time.Minute, redisstate.WithSharedLimits("em"))
	ctx := context.Background()

	lim := a.reg.Limiter("em", 0.1, 1) // the next token 10s after the burst
	require.NoError(t, lim.Wait(ctx, 0), "the burst")
	lim.Refund()
	require.NoError(t, b.reg.Limiter("em", 0.1, 1).Wait(ctx, 100*time.Millisecond), "the peer takes the token given back")
	require.ErrorIs(t, lim.Wait(ctx, 100*time.Millisecond), runtime.ErrRateLimited, "and it was the only one")
}

// TestRefundWhileRedisIsAway: while Redis is away, a token given back
// goes to the local fallback bucket.
func TestRefundWhileRedisIsAway(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	ctx := context.Background()
	m := attach(t, rdb, "a", time.Minute, redisstate.WithSharedLimits("em"), redisstate.WithLocalShare(1))
	lim := m.reg.Limiter("em", 0.1, 1)
	require.NoError(t, lim.Wait(ctx, 0), "the burst")
	lim.Refund()
	require.NoError(t, lim.Wait(ctx, 100*time.Millisecond), "the token given back")
	require.ErrorIs(t, lim.Wait(ctx, 100*time.Millisecond), runtime.ErrRateLimited, "and only that one")
}

// TestSharedLimitNamesMatchALimiter: a shared name that no limiter of the
// registry has (a typo, most often) is listed with the registry's other
// unmatched settings until a limiter of that name is made; an empty one
// is refused by Attach.
func TestSharedLimitNamesMatchALimiter(t *testing.T) {
	s := startServer(t, "")
	_, err := redisstate.Attach(runtime.NewRegistry(runtime.WithoutEnv()), newClient(t, s), redisstate.WithSharedLimits("em", ""))
	require.ErrorContains(t, err, "WithSharedLimits: an empty name")

	m := attach(t, newClient(t, s), "a", time.Minute, redisstate.WithSharedLimits("eastmony", "em"))
	m.reg.Limiter("eastmoney", 1, 1)
	assert.Equal(t, []string{`"eastmony"`, `"em"`}, m.reg.Unmatched(), "no limiter of either yet")
	m.reg.Limiter("em", 1, 1)
	assert.Equal(t, []string{`"eastmony"`}, m.reg.Health().Unmatched, "the typo")
	m.reg.Limiter("eastmony", 1, 1)
	assert.Empty(t, m.reg.Unmatched())
}

// TestStalledRedisCountsAgainstMaxWait: Redis stalls (SIGSTOP) while the
// process still counts it up; the shared bucket's reservation waits the
// fleet's timeout before the local bucket is asked, and that time counts
// against maxWait: a local token that maxWait would have covered from the
// start of the wait, but not after the timeout, is refused, not waited
// for past maxWait.
func TestStalledRedisCountsAgainstMaxWait(t *testing.T) {
	const stall = 150 * time.Millisecond
	s := startServer(t, "")
	m := attach(t, newClient(t, s), "a", time.Minute, redisstate.WithSharedLimits("em"), redisstate.WithTimeout(stall))
	lim := m.reg.Limiter("em", 0.2, 1) // a token every 5s
	ctx := context.Background()

	// Take the local bucket's burst: its next token is 5s away.
	s.signal(syscall.SIGSTOP)
	require.NoError(t, lim.Wait(ctx, 0))
	due := time.Now().Add(5 * time.Second)
	s.signal(syscall.SIGCONT)
	require.Eventually(t, func() bool { return m.reg.Health().Fleet.Redis == "ok" }, within, time.Millisecond)

	s.signal(syscall.SIGSTOP)
	defer s.signal(syscall.SIGCONT)
	maxWait := time.Until(due) - stall/2 // covers the local token from now, not after the stall
	start := time.Now()
	err := lim.Wait(ctx, maxWait)
	took := time.Since(start)
	require.ErrorIs(t, err, runtime.ErrRateLimited, "took %s, maxWait %s", took, maxWait)
	assert.Less(t, took, maxWait)
}
