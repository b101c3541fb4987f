// Package fleet compares breakergen's shared breaker (package redisstate)
// with gobreaker v2's DistributedCircuitBreaker, both on a real
// redis-server (issue 17 point 8): ten concurrent slow calls, and the
// success path with and without a fleet attached.
package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore is gobreaker's SharedDataStore over go-redis: the state is
// one key, and Lock is a SET NX PX mutex that it polls every LockPoll
// until it gets it (gobreaker's own lock loop retries a failed Lock only
// after 500 ms; redsync, which gobreaker's Redis store uses, waits 50-250
// ms between tries). A short poll is the kindest to gobreaker.
type RedisStore struct {
	RDB redis.UniversalClient
}

// LockPoll is how often Lock tries again; LockTTL how long a held lock
// lives if its holder never unlocks.
const (
	LockPoll = time.Millisecond
	LockTTL  = 5 * time.Second
)

var errLockTimeout = errors.New("fleet: lock not acquired in time")

// Lock takes the mutex called name, waiting for it up to LockTTL.
func (s RedisStore) Lock(name string) error {
	ctx := context.Background()
	end := time.Now().Add(LockTTL)
	for time.Now().Before(end) {
		ok, err := s.RDB.SetNX(ctx, name, 1, LockTTL).Result()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		time.Sleep(LockPoll)
	}
	return errLockTimeout
}

// Unlock releases the mutex called name.
func (s RedisStore) Unlock(name string) error {
	return s.RDB.Del(context.Background(), name).Err()
}

// GetData returns the state stored as name; nil when there is none.
func (s RedisStore) GetData(name string) ([]byte, error) {
	b, err := s.RDB.Get(context.Background(), name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

// SetData stores the state as name.
func (s RedisStore) SetData(name string, data []byte) error {
	return s.RDB.Set(context.Background(), name, data, 0).Err()
}
