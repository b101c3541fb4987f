package redisstate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate/redistest"
	"github.com/breakergen/breakergen/runtime"
)

// slowSecondRead holds, once armed, the second round trip that reads
// notes' values (readState's) for delay, as a server that stalls once.
type slowSecondRead struct {
	armed atomic.Bool
	reads atomic.Int64
	delay time.Duration
}

func (h *slowSecondRead) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *slowSecondRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *slowSecondRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.armed.Load() && len(cmds) > 0 && cmds[0].Name() == "get" && h.reads.Add(1) == 2 {
			<-time.After(h.delay)
		}
		return next(ctx, cmds)
	}
}

// logBuffer is a log sink safe for the fleet's goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestOneSlowReadOfManyIsNotAnOutage: a resync reads 600 keys' notes in
// three round trips, and the second one stalls past the timeout once. It is
// tried again, every key with a note opens, and Redis is not counted
// away for one slow read among others that answered.
func TestOneSlowReadOfManyIsNotAnOutage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv, err := redistest.Start(ctx)
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	const timeout = time.Second // the other round trips' bound, generous for a loaded machine
	slow := &slowSecondRead{delay: timeout + timeout/2}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	rdb.AddHook(slow)
	t.Cleanup(func() { _ = rdb.Close() })

	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(logger))
	f, err := Attach(reg, rdb, WithOrigin("b"), WithTimeout(timeout), WithLogger(logger))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })

	// Keys made after Attach and never called: only the resync below
	// reads their notes.
	const keys = 600
	fam := reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1, ResetTimeout: time.Minute},
		runtime.FamilyConfig{Keys: keys})
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range keys {
			fam.Breaker(fmt.Sprint(i))
			p.Set(ctx, f.noteKey(fmt.Sprint("quote/", i)), `{"v":1,"origin":"a","reason":"403 banned"}`, time.Minute)
		}
		return nil
	})
	require.NoError(t, err)
	slow.armed.Store(true)
	f.resync()
	assert.EqualValues(t, 4, slow.reads.Load(), "three round trips, the slow one twice")
	assert.Equal(t, keys, fam.Health().Open)
	assert.True(t, f.up.Load(), "Redis counted away")
	assert.NotContains(t, logs.String(), "Redis is away")
}
