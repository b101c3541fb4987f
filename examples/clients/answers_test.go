package clients_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// Store is a service's own store over go-redis: Pipelined is go-redis's
// (its signature spells go-redis's types), so its redis.Nil is an
// answer; Load is the service's, whose errors, redis.Nil too, are
// failures unless its line excludes them.
//
//breaker:name=store threshold=2 reset=5s
type Store interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	Load(ctx context.Context, key string) (string, error)
}

// Explicit excludes redis.Nil already: its route names it once.
//
//breaker:name=explicit threshold=2 reset=5s exclude=redis.Nil
type Explicit interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// fakeStore answers every call with err.
type fakeStore struct{ err error }

func (f fakeStore) Pipelined(context.Context, func(redis.Pipeliner) error) ([]redis.Cmder, error) {
	return nil, f.err
}

func (f fakeStore) Load(context.Context, string) (string, error) { return "", f.err }

func (f fakeStore) Process(context.Context, redis.Cmder) error { return f.err }

// TestRedisAnswersPerMethod: redis.Nil is an answer of a go-redis method
// (Pipelined, Process) and a failure of a method of the service's own
// (Load) routed by the same line; an exclude that names it already is
// kept as it is.
func TestRedisAnswersPerMethod(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(newClock())
	store := NewStoreBreaker(fakeStore{redis.Nil}, reg)
	b, ok := reg.Lookup("store")
	require.True(t, ok)
	for range 5 {
		_, err := store.Pipelined(ctx, nil)
		assert.ErrorIs(t, err, redis.Nil)
	}
	assert.Equal(t, runtime.Closed, b.State(), "Pipelined's miss is an answer")
	for range 2 {
		_, err := store.Load(ctx, "k")
		assert.ErrorIs(t, err, redis.Nil)
	}
	assert.Equal(t, runtime.Open, b.State(), "Load's redis.Nil is its own failure: threshold=2")

	explicit := NewExplicitBreaker(fakeStore{redis.Nil}, reg)
	for range 5 {
		assert.ErrorIs(t, explicit.Process(ctx, nil), redis.Nil)
	}
	e, ok := reg.Lookup("explicit")
	require.True(t, ok)
	assert.Equal(t, runtime.Closed, e.State())
	src, err := os.ReadFile("answers_breaker_test.go")
	require.NoError(t, err)
	assert.NotContains(t, string(src), "redis.Nil, redis.Nil", "an exclude of the same is not repeated")
}
