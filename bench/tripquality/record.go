package tripquality

import (
	"context"
	"io"
	"log/slog"

	"github.com/breakergen/breakergen/runtime"
)

// Record writes the background stream of seed at rate (the calls and
// clock of [Measure]'s background runs) as a recording
// (runtime.WithRecorder) of a breaker called "upstream" that never trips,
// so that every call reaches the upstream and the recording says what the
// upstream did: what `breakergen sim` replays. Like Measure it must run
// inside a testing/synctest bubble.
func Record(w io.Writer, seed uint64, calls int, rate float64) error {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithRecorder(w),
		runtime.WithLogger(slog.New(slog.DiscardHandler)))
	b := reg.Breaker(runtime.Config{Name: "upstream", FailureThreshold: calls + 1})
	s := newStream(seed)
	for range calls {
		fail := s.next(rate)
		_ = b.Do(context.Background(), func(context.Context) error {
			if fail {
				return errUpstream
			}
			return nil
		})
	}
	return reg.Close()
}

// Background runs contender c on the background stream of seed at rate,
// as [Measure] does, and returns its trips and refused calls.
func Background(c Contender, seed uint64, calls int, rate float64) (trips, refused int) {
	return background(c.New(), seed, calls, rate)
}
