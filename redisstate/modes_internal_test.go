package redisstate

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate/redistest"
	"github.com/breakergen/breakergen/runtime"
)

// TestReadModesAppliesBeforeReturning: readState runs on three goroutines
// (Attach, the subscriber's resync, the heartbeat's), and whichever
// returns, the breaker is in the mode it read. Without the follow lock
// one read recorded the mode and another, finding it known, returned
// before the first moved the breaker: Attach returned a process that
// still admitted calls in a fleet isolated by its operator.
func TestReadModesAppliesBeforeReturning(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv, err := redistest.Start(ctx)
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 4})
	t.Cleanup(func() { _ = rdb.Close() })

	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Minute})
	f, err := Attach(reg, rdb, WithOrigin("late"), WithTimeout(5*time.Second), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })

	note := modeNote{V: version, Mode: modeIsolated, Origin: "a", Reason: "isolated by operator: ban", Seq: 1}
	require.NoError(t, rdb.Set(ctx, f.modeKey("tdx"), marshal(note), 0).Err())
	for i := range 300 {
		// Forget the mode, and leave it, as a process that never heard of it.
		f.modeMu.Lock()
		delete(f.modes, "tdx")
		f.modeMu.Unlock()
		b.PeerMode("a", runtime.Closed, "reset for the next round")
		require.Equal(t, runtime.Closed, b.State())

		other := make(chan struct{})
		go func() {
			defer close(other)
			f.readState(b)
		}()
		f.readState(b)
		require.Equal(t, runtime.Isolated, b.State(), "round %d: readState returned before the breaker was isolated", i)
		<-other
	}
}
