package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

var errRecorded = errors.New("upstream down")

// TestRecorderWritesOneLinePerCall records successes, failures, the trip
// and the rejections after it, inside a bubble so that every offset and
// duration is exact.
func TestRecorderWritesOneLinePerCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out))
		b := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 2, ResetTimeout: time.Minute})
		call := func(d time.Duration, err error) {
			_ = b.Do(context.Background(), func(context.Context) error {
				time.Sleep(d)
				return err
			})
		}
		call(5*time.Millisecond, nil)
		time.Sleep(time.Second)
		call(time.Millisecond, errRecorded)
		call(2*time.Millisecond, errRecorded) // trips
		call(0, nil)                          // rejected
		require.Equal(t, &runtime.RecordingHealth{Calls: 4}, reg.Health().Recording)
		require.NoError(t, reg.Close())
		require.NoError(t, reg.Close(), "a second Close does nothing")

		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		require.Len(t, lines, 6, out.String())
		assert.Equal(t, "breakergen-recording v1 start=2000-01-01T00:00:00Z unit=ns sample=1", lines[0])
		assert.Equal(t, []string{
			"0 5000000 success tdx",
			"1005000000 1000000 failure tdx",
			"1006000000 2000000 failure tdx",
			"1008000000 0 rejected tdx",
			"# end calls=4 dropped=0",
		}, lines[1:])
		call(0, nil)
		assert.Equal(t, uint64(1), reg.Health().Recording.Dropped, "a call after Close is not recorded")
	})
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct {
	release chan struct{}
	buf     bytes.Buffer
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	return w.buf.Write(p)
}

// TestRecorderNeverBlocksACall fills the buffer behind a writer that
// blocks: the calls go on, the ones that found it full are dropped and
// counted, in Health and at the end of the recording.
func TestRecorderNeverBlocksACall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &blockingWriter{release: make(chan struct{})}
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(w))
		b := reg.Breaker(runtime.Config{Name: "tdx"})
		const calls = 3 * runtime.RecordBufferCapacity // more than the buffer and the writer's 64 KiB hold
		for range calls {
			require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
		}
		synctest.Wait()
		h := reg.Health().Recording
		require.NotNil(t, h)
		assert.Equal(t, uint64(calls), h.Calls+h.Dropped)
		assert.Positive(t, h.Dropped)
		close(w.release)
		require.NoError(t, reg.Close())
		text := w.buf.String()
		assert.Equal(t, int(h.Calls), strings.Count(text, " success tdx\n"))
		assert.True(t, strings.HasSuffix(text, "# end calls="+itoa(h.Calls)+" dropped="+itoa(h.Dropped)+"\n"), text[len(text)-60:])
	})
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRecorderCloseReturnsTheWriteError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(failingWriter{}))
		_ = reg.Breaker(runtime.Config{Name: "tdx"}).Do(context.Background(), func(context.Context) error { return nil })
		assert.EqualError(t, reg.Close(), "disk full")
	})
}

func TestNoRecorderNoRecording(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithRecorder(nil))
	assert.Nil(t, reg.Health().Recording)
	assert.NoError(t, reg.Close())
	js, err := json.Marshal(reg.Health())
	require.NoError(t, err)
	assert.NotContains(t, string(js), "recording")
}
