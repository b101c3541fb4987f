package fleet_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/bench/contend"
	"github.com/breakergen/breakergen/bench/fleet"
	"github.com/breakergen/breakergen/bench/quote"
	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/redisstate/redistest"
	"github.com/breakergen/breakergen/runtime"
)

// startServer starts a redis-server on a free loopback port without
// persistence (skipping without one) and stops it when tb ends.
func startServer(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := redistest.Start(ctx)
	if errors.Is(err, redistest.ErrNotInstalled) {
		tb.Skip(err)
	}
	require.NoError(tb, err)
	tb.Cleanup(s.Stop)
	return s.Addr
}

func client(tb testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// attached returns a registry attached to the fleet on addr.
func attached(tb testing.TB, addr string) *runtime.Registry {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f, err := redisstate.Attach(reg, client(tb, addr))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = f.Close() })
	return reg
}

func distributed(tb testing.TB, addr string) *gobreaker.DistributedCircuitBreaker[quote.Quote] {
	cb, err := gobreaker.NewDistributedCircuitBreaker[quote.Quote](fleet.RedisStore{RDB: client(tb, addr)},
		contend.GobreakerSettings("quotes", contend.Settings{Threshold: 5, Reset: 30 * time.Second}))
	require.NoError(tb, err)
	return cb
}

// slowCall is the upstream of the concurrency benchmark.
const slowCall = 50 * time.Millisecond

// BenchmarkTenSlowCalls makes ten concurrent 50 ms calls per op: the
// time per op is the wall time of the ten.
func BenchmarkTenSlowCalls(b *testing.B) {
	addr := startServer(b)
	ten := func(b *testing.B, call func() error) {
		for b.Loop() {
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					if err := call(); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
		}
	}
	b.Run("breakergen-fleet", func(b *testing.B) {
		br := attached(b, addr).Breaker(runtime.Config{Name: "quotes"})
		ten(b, func() error {
			return br.Do(context.Background(), func(context.Context) error { time.Sleep(slowCall); return nil })
		})
	})
	b.Run("gobreaker-distributed", func(b *testing.B) {
		cb := distributed(b, addr)
		ten(b, func() error {
			_, err := cb.Execute(func() (quote.Quote, error) { time.Sleep(slowCall); return quote.Quote{}, nil })
			return err
		})
	})
}

// BenchmarkSuccess is one successful call through the generated wrapper,
// without and with a fleet attached (the success path never touches
// Redis, so they should not differ), and through gobreaker's distributed
// breaker, which goes to Redis four times per call.
func BenchmarkSuccess(b *testing.B) {
	addr := startServer(b)
	up := quote.NewUpstream(nil)
	ctx := context.Background()
	b.Run("breakergen", func(b *testing.B) {
		w := quote.NewQuoterBreaker(up, runtime.NewRegistry(runtime.WithoutEnv()))
		for b.Loop() {
			_, _ = w.Quote(ctx, "600519")
		}
	})
	b.Run("breakergen-fleet", func(b *testing.B) {
		w := quote.NewQuoterBreaker(up, attached(b, addr))
		for b.Loop() {
			_, _ = w.Quote(ctx, "600519")
		}
	})
	b.Run("gobreaker-distributed", func(b *testing.B) {
		cb := distributed(b, addr)
		for b.Loop() {
			_, _ = cb.Execute(func() (quote.Quote, error) { return up.Quote(ctx, "600519") })
		}
	})
}

func TestRedisStore(t *testing.T) {
	addr := startServer(t)
	s := fleet.RedisStore{RDB: client(t, addr)}
	data, err := s.GetData("state")
	require.NoError(t, err)
	require.Nil(t, data, "nothing stored")
	require.NoError(t, s.SetData("state", []byte("x")))
	data, err = s.GetData("state")
	require.NoError(t, err)
	require.Equal(t, []byte("x"), data)

	require.NoError(t, s.Lock("mutex"))
	taken, err := s.RDB.SetNX(context.Background(), "mutex", 1, time.Second).Result()
	require.NoError(t, err)
	require.False(t, taken, "held")
	require.NoError(t, s.Unlock("mutex"))
	require.NoError(t, s.Lock("mutex"), "free again")
}
