package redisstate_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
)

// BenchmarkTripReachesPeer is how long a trip in one process takes to
// open the breaker of the same name in another: two registries, each
// attached through a client of its own to one redis-server on this
// machine (loopback), as two processes would be. Each op trips a fresh
// breaker on a (threshold 1) and ends when b's state hook reports that
// breaker OPEN with the peer's reason: a's PUBLISH, b's subscriber, its
// applier and b's transition. Tests assert no wall time (the
// three-process test logs what it sees); this is the number docs/fleet.md
// quotes:
//
//	cd redisstate && go test -run '^$' -bench TripReachesPeer -count 6 .
func BenchmarkTripReachesPeer(b *testing.B) {
	s := startServer(b, "")
	quiet := slog.New(slog.DiscardHandler)
	opened := make(chan string, 1)
	regA := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(quiet))
	regB := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(quiet),
		runtime.OnStateChange(func(ev runtime.Event) {
			if ev.To == runtime.Open && strings.HasPrefix(ev.Reason, "peer a: ") {
				select {
				case opened <- ev.Source:
				default: // a second OPEN in one op: the wrong name below says so
				}
			}
		}))
	for _, m := range []struct {
		reg    *runtime.Registry
		origin string
	}{{regA, "a"}, {regB, "b"}} {
		c := s.client()
		f, err := redisstate.Attach(m.reg, c, redisstate.WithOrigin(m.origin),
			redisstate.WithTimeout(time.Second), redisstate.WithLogger(quiet))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = f.Close()
			_ = c.Close()
		})
	}
	cfg := runtime.Config{FailureThreshold: 1, ResetTimeout: time.Hour}
	failing := func(context.Context) error { return errBanned }
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		cfg.Name = "up" + strconv.Itoa(i)
		ba, bb := regA.Breaker(cfg), regB.Breaker(cfg)
		b.StartTimer()
		_ = ba.Do(context.Background(), failing)
		select {
		case name := <-opened:
			if name != cfg.Name {
				b.Fatalf("b opened %s, want %s", name, cfg.Name)
			}
		case <-time.After(10 * time.Second):
			b.Fatalf("b's %s is %s 10 s after a's trip", cfg.Name, bb.State())
		}
	}
}
