package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/testkit"
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

// TestRecordedClassIsTheLiveVerdict makes calls of Breaker.Do that end
// every way the breaker decides the outcome of (a deadline, a cancel,
// injected latency cut short by either, a classifier's verdicts) and
// checks that each line's class is what the breaker counted: sim replays
// the class, so it must be what happened.
func TestRecordedClassIsTheLiveVerdict(t *testing.T) {
	errOK, errSkip := errors.New("classified a success"), errors.New("classified neither")
	classify := func(ctx context.Context, err error) runtime.Outcome {
		switch {
		case errors.Is(err, errOK):
			return runtime.Success
		case errors.Is(err, errSkip), errors.Is(err, context.DeadlineExceeded):
			return runtime.Ignored
		case errors.Is(err, context.Canceled):
			return runtime.Failure // this breaker's owner counts a cancel
		}
		return runtime.Failure
	}
	upstream := func(err error) func(context.Context) error {
		return func(ctx context.Context) error {
			if err != nil {
				return err
			}
			<-ctx.Done() // until the deadline or the cancel
			return ctx.Err()
		}
	}
	deadline, canceled := testkit.Deadline, testkit.Canceled
	for _, tc := range []struct {
		name    string
		breaker string // plain, lat (injected latency), cls (a classifier), clslat (both)
		ctx     func() (context.Context, context.CancelFunc)
		err     error // nil: the upstream waits for ctx to end
		class   string
	}{
		{"the upstream's deadline", "plain", deadline, nil, "failure"},
		{"the caller's cancel", "plain", canceled, nil, "ignored"},
		{"injected latency cut by the deadline", "lat", deadline, nil, "failure"},
		{"injected latency cut by a cancel", "lat", canceled, nil, "canceled"},
		{"a classifier's success", "cls", deadline, errOK, "success"},
		{"a classifier's neither", "cls", deadline, errSkip, "ignored"},
		{"a classifier's cancel counted as a failure", "cls", canceled, nil, "failure"},
		{"a classifier's deadline counted as neither", "cls", deadline, nil, "ignored"},
		{"injected latency cut by a deadline a classifier ignores", "clslat", deadline, nil, "canceled"},
		{"injected latency cut by a cancel a classifier counts", "clslat", canceled, nil, "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out bytes.Buffer
				reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&out),
					runtime.WithConfig(runtime.Config{Name: "lat", Latency: time.Second}),
					runtime.WithConfig(runtime.Config{Name: "clslat", Latency: time.Second}),
					runtime.WithClassifier("cls", classify), runtime.WithClassifier("clslat", classify))
				b := reg.Breaker(runtime.Config{Name: tc.breaker})
				before := b.Stats()
				ctx, cancel := tc.ctx()
				_ = b.Do(ctx, upstream(tc.err))
				cancel()
				live := testkit.Verdict(before, b.Stats())
				require.NoError(t, reg.Close())
				lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
				require.Len(t, lines, 3, out.String())
				f := strings.Fields(lines[1])
				require.Len(t, f, 4, lines[1])
				assert.Equal(t, tc.class, f[2], lines[1])
				assert.Equal(t, live, testkit.ClassVerdict(f[2]), "the live breaker counted %s; the recording says %s", live, f[2])
			})
		})
	}
}

// limitWriter writes its first limit bytes, then fails.
type limitWriter struct {
	limit int
	buf   bytes.Buffer
}

func (w *limitWriter) Write(p []byte) (int, error) {
	n := min(len(p), w.limit-w.buf.Len())
	w.buf.Write(p[:n])
	if n < len(p) {
		return n, errors.New("disk full")
	}
	return n, nil
}

// TestRecorderCountsLinesAFailedWriteLost: a line that a failed write did
// not write whole is dropped, not recorded, and so is every call after
// it; each call is counted once.
func TestRecorderCountsLinesAFailedWriteLost(t *testing.T) {
	const header = "breakergen-recording v1 start=2000-01-01T00:00:00Z unit=ns sample=1\n"
	const line = "0 0 success tdx\n"
	for _, tc := range []struct {
		name           string
		limit          int // bytes the writer takes
		calls, dropped uint64
	}{
		{"every write fails", 0, 0, 10},
		{"the third line is cut", len(header) + 2*len(line) + 5, 2, 8},
		{"the trailer is cut", len(header) + 10*len(line) + 5, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &limitWriter{limit: tc.limit}
				reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(w))
				b := reg.Breaker(runtime.Config{Name: "tdx"})
				for range 10 {
					require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
					synctest.Wait() // written, one write a call
				}
				assert.EqualError(t, reg.Close(), "disk full")
				assert.Equal(t, &runtime.RecordingHealth{Calls: tc.calls, Dropped: tc.dropped}, reg.Health().Recording)
				assert.Equal(t, int(tc.calls), strings.Count(w.buf.String(), line), "the lines written whole")
				assert.NotContains(t, w.buf.String(), "dropped=", "no whole trailer vouches for a recording a write cut")
			})
		})
	}
}

// TestCloseContextBoundsTheWaitForAWriter: a writer that blocks (a hung
// file system, a pipe nobody reads) holds Close; CloseContext gives up
// when its ctx ends, and a later Close finishes once the writer returns.
func TestCloseContextBoundsTheWaitForAWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &blockingWriter{release: make(chan struct{})}
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(w))
		require.NoError(t, reg.Breaker(runtime.Config{Name: "tdx"}).Do(context.Background(), func(context.Context) error { return nil }))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		begin := time.Now()
		err := reg.CloseContext(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(begin))
		close(w.release)
		require.NoError(t, reg.Close())
		assert.True(t, strings.HasSuffix(w.buf.String(), "0 0 success tdx\n# end calls=1 dropped=0\n"), w.buf.String())
	})
}

// TestRecorderCloseUnderLoad: calls made while Close runs are either in
// the recording or counted as dropped, never counted as recorded without
// their line: the file's lines, Health's calls and the end line's calls
// agree, and with the drops they add up to the calls made. make test runs
// it many times under -race.
func TestRecorderCloseUnderLoad(t *testing.T) {
	for round := range 50 {
		var w logBuffer // written by the recorder, read after Close
		reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discardLogger()), runtime.WithRecorder(&w))
		b := reg.Breaker(runtime.Config{Name: "x"})
		var made atomic.Uint64
		var warm, wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			warm.Add(1)
			wg.Go(func() {
				for i := 0; ; i++ {
					if i == 50 {
						warm.Done() // calls are flowing: Close among them
					}
					select {
					case <-stop: // closed once every worker is warm
						return
					default:
					}
					_ = b.Do(context.Background(), func(context.Context) error { return nil })
					made.Add(1)
				}
			})
		}
		warm.Wait()
		require.NoError(t, reg.Close())
		close(stop)
		wg.Wait()
		out := w.String()
		lines := uint64(strings.Count(out, " success x\n"))
		h := reg.Health().Recording
		require.Equal(t, lines, h.Calls, "round %d: the lines written are the calls recorded", round)
		require.Equal(t, made.Load(), h.Calls+h.Dropped, "round %d: every call is recorded or dropped", round)
		require.Contains(t, out, "# end calls="+strconv.FormatUint(lines, 10)+" ", "round %d", round)
	}
}
