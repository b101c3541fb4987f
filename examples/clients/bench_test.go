package clients_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/breakergen/breakergen/examples/clients"
	"github.com/breakergen/breakergen/runtime"
)

// fakeRedis answers Get with one command made beforehand: what is left
// is the cost of the call itself, direct or guarded.
type fakeRedis struct {
	clients.Cache // every other command: not called
	get           *redis.StringCmd
}

func (f *fakeRedis) Get(context.Context, string) *redis.StringCmd { return f.get }

// Getter is the same call with an error result, guarded the plain way:
// the yardstick of the guarded Get.
//
//breaker:name=plain
type Getter interface {
	Get(ctx context.Context, key string) (string, error)
}

type fakeGetter struct{}

func (fakeGetter) Get(context.Context, string) (string, error) { return "v", nil }

// BenchmarkRedisGet compares a go-redis Get called directly with the same
// Get through CacheBreaker, on its CLOSED success path, beside a plain
// wrapper of a (string, error) Get, and the refusal of
// an OPEN breaker (one allocation: the command the refusal comes in).
//
//	cd examples/clients && go test -run '^$' -bench RedisGet -benchmem -count 6 .
func BenchmarkRedisGet(b *testing.B) {
	ctx := context.Background()
	f := &fakeRedis{get: redis.NewStringResult("v", nil)}
	run := func(b *testing.B, c clients.Cache) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Get(ctx, "k").Err(); err != nil && !errors.Is(err, runtime.ErrOpen) {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, f) })
	b.Run("guarded", func(b *testing.B) {
		run(b, clients.NewCacheBreaker(f, newRegistry(newClock())))
	})
	b.Run("plain", func(b *testing.B) {
		var g Getter = NewGetterBreaker(fakeGetter{}, newRegistry(newClock()))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Get(ctx, "k"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refused", func(b *testing.B) {
		down := &fakeRedis{get: redis.NewStringResult("", errors.New("down"))}
		w := clients.NewCacheBreaker(down, newRegistry(newClock()))
		for range 3 { // threshold=3
			_ = w.Get(ctx, "k")
		}
		run(b, w)
	})
}
