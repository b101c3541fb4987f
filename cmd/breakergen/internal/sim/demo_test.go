package sim

import (
	"bytes"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/marketdata/demo"
	"github.com/breakergen/breakergen/examples/marketdata/fakeupstream"
	"github.com/breakergen/breakergen/runtime"
)

// demoSets are the demo's settings (examples/marketdata/sources.go, with
// the reset of 2s the scenario gives every breaker) as sim candidates.
var demoSets = []string{
	"eastmoney:threshold=5 reset=2s",
	"tencent:window=50 failrate=50% minimum=20 reset=2s",
	"tdx:threshold=5 reset=2s",
	"push2ex:threshold=2 reset=2s",
	"fallback:sina:threshold=5 reset=2s",
}

// TestReplayOfTheDemoTripsWhereTheDemoTripped records the whole demo
// scenario (inside a bubble, so every instant is exact), then replays the
// recording with the demo's own settings: every breaker trips as often,
// and at the same instants, as it did live.
func TestReplayOfTheDemoTripsWhereTheDemoTripped(t *testing.T) {
	var (
		rec     bytes.Buffer
		live    []runtime.Event
		refused = map[string]uint64{} // live rejections by breaker (recording counts calls)
		rep     *demo.Report
	)
	synctest.Test(t, func(t *testing.T) {
		up := fakeupstream.New()
		sc := &demo.Scenario{Up: up, Client: up.Client(), Reset: 2 * time.Second,
			Options: []runtime.Option{runtime.WithRecorder(&rec), runtime.WithEventCapacity(10_000)}}
		var out bytes.Buffer
		var err error
		rep, err = sc.Run(t.Context(), &lockedWriter{w: &out})
		require.NoError(t, err, out.String())
		for _, b := range sc.Registry().Breakers() {
			refused[b.Name()] = b.Stats().Rejections
		}
		require.NoError(t, sc.Registry().Close())
		live = sc.Registry().Events(10_000)
		slices.Reverse(live)
		synctest.Wait()
	})
	r, err := Read(&rec)
	require.NoError(t, err)
	require.Zero(t, r.Dropped)
	trips := 0
	for _, set := range demoSets {
		c, err := ParseCandidate(set, "-set")
		require.NoError(t, err)
		var want []time.Duration
		for _, ev := range live {
			if ev.Source == c.Name && ev.From == runtime.Closed && ev.To == runtime.Open {
				want = append(want, ev.Time.Sub(r.Start))
			}
		}
		res := Replay(r, c, Options{Outage: 5})
		var got []time.Duration
		for i, b := range res.Bands {
			if i > 0 && b.State == runtime.Open && res.Bands[i-1].State == runtime.Closed {
				got = append(got, b.At)
			}
		}
		assert.Equal(t, want, got, "%s: the instants of its trips, live and replayed", c.Name)
		assert.Equal(t, len(want), res.Trips, c.Name)
		// An operator's isolation is not in the recording: the calls it
		// refused live are admitted by the replay (and count as neither).
		isolated := isolatedRefusals(r, live, c.Name)
		assert.Equal(t, int(refused[c.Name])-isolated, res.Refused, "%s: calls refused, live (%d, %d of them while isolated) and replayed", c.Name, refused[c.Name], isolated)
		if c.Name == "tdx" {
			require.NotEmpty(t, res.ToTrip)
			assert.Equal(t, rep.TripCalls, res.ToTrip[0], "tdx trips on the outage's call it tripped on live")
		}
		trips += len(want)
		t.Logf("%s: live trips at %v, %d refused", c.Name, want, refused[c.Name])
	}
	assert.GreaterOrEqual(t, trips, 4, "the demo trips tdx, tencent, eastmoney (its ban) and more")
}

// isolatedRefusals counts the recorded rejections of breaker name made
// while an operator had it isolated.
func isolatedRefusals(r *Recording, live []runtime.Event, name string) int {
	var spans [][2]time.Duration
	for _, ev := range live {
		if ev.Source != name {
			continue
		}
		at := ev.Time.Sub(r.Start)
		if ev.To == runtime.Isolated {
			spans = append(spans, [2]time.Duration{at, 1<<63 - 1})
		} else if ev.From == runtime.Isolated && len(spans) > 0 {
			spans[len(spans)-1][1] = at
		}
	}
	n := 0
	for _, c := range r.Calls {
		if r.Names[c.Name] != name || c.Class != Rejected {
			continue
		}
		for _, s := range spans {
			if c.Start >= s[0] && c.Start <= s[1] { // inclusive: the bubble's clock may not move in between
				n++
			}
		}
	}
	return n
}

// lockedWriter serialises the scenario's writes (its hooks run on timers'
// goroutines too).
type lockedWriter struct {
	mu sync.Mutex // guards w
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
