package runtime_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// TestHookOnTimerGoroutine: the OPEN → HALF_OPEN move is made by a timer
// when nobody looks at the state, so its hook runs on the timer's
// goroutine, beside the caller's. What the hook writes is read under the
// hook's lock, after the bubble has settled; make test runs this many
// times under -race.
func TestHookOnTimerGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex // guards seen
		var seen []string
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()),
			runtime.OnStateChange(func(ev runtime.Event) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, ev.From.String()+"→"+ev.To.String())
			}))
		hooked := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(seen)
		}
		b := reg.Breaker(runtime.Config{Name: "timer", FailureThreshold: 1, ResetTimeout: time.Second})
		err := b.Do(context.Background(), func(context.Context) error { return errors.New("down") })
		require.Error(t, err)
		assert.Equal(t, []string{"CLOSED→OPEN"}, hooked(), "the caller's goroutine ran the trip's hook")

		time.Sleep(time.Second)
		synctest.Wait() // the timer's goroutine has run the hook
		assert.Equal(t, []string{"CLOSED→OPEN", "OPEN→HALF_OPEN"}, hooked())
		assert.Len(t, reg.Events(0), 2)
	})
}
