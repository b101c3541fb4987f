package sim

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

const head = "breakergen-recording v1 start=2026-03-02T09:30:00Z unit=ns sample=1\n"

// recording makes a recording of tdx calls, one every 10ms, 1ms long,
// whose outcomes are the letters of pattern: s success, f failure, r
// rejected.
func recording(pattern string) string {
	var b strings.Builder
	b.WriteString(head)
	for i, c := range pattern {
		class := map[rune]string{'s': "success", 'f': "failure", 'r': "rejected", 'i': "injected", 'c': "failure/30000000"}[c]
		fmt.Fprintf(&b, "%d %d %s tdx\n", time.Duration(i)*10*time.Millisecond, time.Millisecond, class)
	}
	b.WriteString("# end calls=" + fmt.Sprint(len(pattern)) + " dropped=0\n")
	return b.String()
}

func mustRead(t *testing.T, text string) *Recording {
	t.Helper()
	rec, err := Read(strings.NewReader(text))
	require.NoError(t, err)
	return rec
}

func mustCandidate(t *testing.T, s string) Candidate {
	t.Helper()
	c, err := ParseCandidate(s, "-set")
	require.NoError(t, err)
	return c
}

func TestReadParsesEveryField(t *testing.T) {
	rec := mustRead(t, head+
		"20 5 failure/2000000000 eastmoney\n"+
		"10 0 rejected \"fallback: sina\"\n"+
		"10 3 success fallback:sina\n"+
		"# end calls=3 dropped=7\n")
	assert.Equal(t, 1, rec.Version)
	assert.Equal(t, time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC), rec.Start)
	assert.Equal(t, []string{"eastmoney", "fallback: sina", "fallback:sina"}, rec.Names)
	assert.Equal(t, []Call{
		{Start: 10, Dur: 0, Class: Rejected, Name: 1, Line: 3},
		{Start: 10, Dur: 3, Class: Success, Name: 2, Line: 4},
		{Start: 20, Dur: 5, Class: Failure, Retry: 2 * time.Second, Name: 0, Line: 2},
	}, rec.Calls, "in start order, ties in line order")
	assert.Equal(t, int64(7), rec.Dropped)
	assert.Equal(t, 25*time.Nanosecond, rec.End())
}

func TestReadErrorsNameTheLine(t *testing.T) {
	for text, want := range map[string]string{
		"":                                     "recording: empty",
		"hello\n":                              "recording:1: not a recording",
		"breakergen-recording v2 start=x\n":    "recording:1: recording format v2: this breakergen reads v1",
		head + "1 2 success\n":                 "recording:2: want START DURATION CLASS NAME",
		head + strings.Repeat("7", 300) + "\n": `recording:2: want START DURATION CLASS NAME, got "` + strings.Repeat("7", 100) + `"... (300 bytes in all)`,
		head + "1 -2 success tdx\n":            "recording:2: want a start and a duration in ns",
		head + "1 2 sucess tdx\n":              `recording:2: unknown class "sucess"`,
		head + "9223372036854775806 2 success tdx\n":                      "recording:2: the call ends past the last instant",
		head + "1 2 success/5 tdx\n":                                      "recording:2: bad cooldown",
		head + "# end dropped=x\n":                                        `recording:2: bad dropped count "x"`,
		"breakergen-recording v1 start=2026-03-02T09:30:00Z sample=0.1\n": "only complete recordings",
	} {
		_, err := Read(strings.NewReader(text))
		if assert.Error(t, err, text) {
			assert.Contains(t, err.Error(), want, text)
		}
	}
}

func TestParseCandidate(t *testing.T) {
	c := mustCandidate(t, "tdx:window=100 failrate=50% reset=10s..1m")
	assert.Equal(t, "tdx", c.Name)
	assert.Equal(t, "window=100 failrate=50% reset=10s..1m", c.Keys)
	assert.Equal(t, runtime.Config{Name: "tdx", WindowCalls: 100, FailureRate: 0.5, ResetTimeout: 10 * time.Second, ResetMax: time.Minute}, c.Config)

	c = mustCandidate(t, "fallback:sina:threshold=3")
	assert.Equal(t, "fallback:sina", c.Name)
	assert.Equal(t, 3, c.Config.FailureThreshold)
	c = mustCandidate(t, "tdx:")
	assert.Equal(t, runtime.Config{Name: "tdx"}, c.Config, "no keys: the defaults")

	for in, want := range map[string]string{
		"tdx":                        "want NAME:key=value",
		":threshold=3":               "want NAME:key=value",
		"tdx:threshold=x":            `-set: tdx: threshold: "x" is not an integer`,
		"tdx:ratelimit=1/2":          "-set: tdx: ratelimit is not replayed; sim replays threshold, reset",
		"tdx:treshold=3":             "unknown key",
		"tdx:threshold=3 timeout=1s": "timeout is not replayed",
	} {
		_, err := ParseCandidate(in, "-set")
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want, in)
		}
	}
	cs, err := ReadCandidates(strings.NewReader("# candidates\n\ntdx:threshold=3\n tdx:threshold=9 \n"), "sets.txt")
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Equal(t, 9, cs[1].Config.FailureThreshold)
	_, err = ReadCandidates(strings.NewReader("tdx:threshold=3\ntdx:nope=1\n"), "sets.txt")
	assert.ErrorContains(t, err, "sets.txt:2: tdx:")
}

// TestReplayCountsWhatTheBreakerDid replays a stream by hand: three
// failures trip threshold=3 on the third; the calls of the next 50ms are
// refused; the probe at 60ms after the trip fails (the carried outcome of
// a recorded rejection) and the breaker reopens; the next probe succeeds.
func TestReplayCountsWhatTheBreakerDid(t *testing.T) {
	// calls every 10ms: s s f f f | r r r r r | r ... ; tripped at 40ms
	// (the third failure, which ends at 41ms), reset 50ms: OPEN 41..91ms.
	rec := mustRead(t, recording("ssfffrrrrrrsssssss"))
	res := Replay(rec, mustCandidate(t, "tdx:threshold=3 reset=50ms"), Options{Outage: 3, CarryLast: true})
	assert.Equal(t, 18, res.Calls)
	assert.Equal(t, 1, res.Trips)
	// Calls at 50..90ms are refused (5); the probe at 100ms (a rejected
	// call carrying the last upstream outcome, a failure) reopens it until
	// 151ms, refusing 110..150 (5 calls).
	assert.Equal(t, 10, res.Refused)
	assert.Equal(t, []int{3}, res.ToTrip, "the outage's third call trips it")
	assert.Equal(t, "recorded failure", res.FirstReason)
	assert.Equal(t, 50*time.Millisecond+50*time.Millisecond, res.Open)
	assert.Equal(t, []Band{
		{0, runtime.Closed},
		{41 * time.Millisecond, runtime.Open}, {91 * time.Millisecond, runtime.HalfOpen},
		{101 * time.Millisecond, runtime.Open}, {151 * time.Millisecond, runtime.HalfOpen},
		{161 * time.Millisecond, runtime.Closed},
	}, res.Bands)

	// A rejected call carries the failure before it: threshold=4 trips
	// on the first one.
	assert.Equal(t, []int{4}, Replay(rec, mustCandidate(t, "tdx:threshold=4"), Options{Outage: 3, CarryLast: true}).ToTrip)
	assert.Equal(t, []int{-1}, Replay(rec, mustCandidate(t, "tdx:threshold=4"), Options{Outage: 3}).ToTrip, "without CarryLast a rejected call counts as neither")
	lax := Replay(mustRead(t, recording("ssfffsss")), mustCandidate(t, "tdx:threshold=4"), Options{Outage: 3})
	assert.Zero(t, lax.Trips)
	assert.Zero(t, lax.Refused)
	assert.Equal(t, []int{-1}, lax.ToTrip, "threshold=4 never trips in that outage")
}

func TestReplayCooldown(t *testing.T) {
	rec := mustRead(t, head+"0 1000 failure/5000000000 eastmoney\n1000000000 1000 success eastmoney\n6000000000 1000 success eastmoney\n")
	res := Replay(rec, mustCandidate(t, "eastmoney:threshold=5"), Options{Outage: 5})
	assert.Equal(t, 1, res.Trips, "a failure asking for a cooldown trips at once")
	assert.Equal(t, 1, res.Refused)
	assert.Contains(t, res.FirstReason, "retry after 5s")
}

// TestReplayAtTheEndOfTime: a call recorded at the last instant a
// recording can hold still replays, and the timers the breaker arms past
// that instant (here its OPEN period, and the reclaim of the probe the
// last call is) never fire rather than wrap around to the past, where
// they fired and were armed again without end.
func TestReplayAtTheEndOfTime(t *testing.T) {
	rec := mustRead(t, head+"0 1 failure tdx\n9223372036854775000 807 failure tdx\n")
	res := Replay(rec, mustCandidate(t, "tdx:threshold=1 reset=1h..24h"), Options{Outage: 1})
	assert.Equal(t, 2, res.Calls)
	assert.Equal(t, []Band{
		{0, runtime.Closed}, {1, runtime.Open}, {time.Hour + 1, runtime.HalfOpen},
		{math.MaxInt64, runtime.Open}, // the probe, which ends at the last instant, failed
	}, res.Bands)
}

// TestReportIsDeterministic replays a recording with jitter, whose draws
// are seeded, twice: the text and the page are the same bytes.
func TestReportIsDeterministic(t *testing.T) {
	rec := mustRead(t, recording(strings.Repeat("sfffff", 40)))
	cands := []Candidate{mustCandidate(t, "tdx:threshold=3 reset=30ms jitter=50%"), mustCandidate(t, "tdx:window=10 failrate=50%")}
	report := func() (string, string) {
		var results []Result
		for _, c := range cands {
			results = append(results, Replay(rec, c, Options{Outage: 5}))
		}
		var text, page bytes.Buffer
		require.NoError(t, WriteText(&text, rec, 5, results))
		require.NoError(t, WriteHTML(&page, rec, results))
		return text.String(), page.String()
	}
	t1, p1 := report()
	t2, p2 := report()
	assert.Equal(t, t1, t2)
	assert.Equal(t, p1, p2)
	assert.Contains(t, p1, "<svg")
	assert.Contains(t, t1, "tdx      threshold=3 reset=30ms jitter=50%")
}

func TestToTripText(t *testing.T) {
	assert.Equal(t, "-", toTripText(nil))
	assert.Equal(t, "5,none,open", toTripText([]int{5, -1, 0}))
	assert.Equal(t, "median 5 (3–9), 1 not", toTripText([]int{3, 5, 9, 5, 4, 6, -1}))
	assert.Equal(t, "median 1 (1–1), 6 open", toTripText([]int{1, 0, 0, 0, 0, 0, 0}), "an outage that began OPEN was protected, not missed")
	assert.Equal(t, "median 5 (3–5), 2 not, 3 open", toTripText([]int{3, -1, 0, 5, 0, -1, 0}))
	assert.Equal(t, "7 open", toTripText([]int{0, 0, 0, 0, 0, 0, 0}))
	assert.Equal(t, "3 not, 4 open", toTripText([]int{-1, 0, -1, 0, -1, 0, 0}))
	assert.Equal(t, "none", toTripText([]int{-1, -1, -1, -1, -1, -1, -1}))
}

// BenchmarkReplay1M reads and replays a recording of a million calls (one
// breaker, 10% failures in bursts, a call a millisecond) against one
// candidate.
func BenchmarkReplay1M(b *testing.B) {
	var text bytes.Buffer
	text.WriteString(head)
	for i := range 1_000_000 {
		class := "success"
		if i%1000 < 100 {
			class = "failure"
		}
		fmt.Fprintf(&text, "%d 500000 %s tdx\n", i*int(time.Millisecond), class)
	}
	text.WriteString("# end calls=1000000 dropped=0\n")
	c, err := ParseCandidate("tdx:threshold=20 reset=5s", "-set")
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		rec, err := Read(bytes.NewReader(text.Bytes()))
		if err != nil {
			b.Fatal(err)
		}
		if res := Replay(rec, c, Options{Outage: 5}); res.Trips == 0 {
			b.Fatal("no trip")
		}
	}
}

// TestReadIgnoresALastLineCutMidWrite: a process killed as it wrote a
// line leaves it without its line break; the complete lines are
// replayed and the report says the last one was ignored. A malformed
// line before the last stays an error.
func TestReadIgnoresALastLineCutMidWrite(t *testing.T) {
	text := strings.TrimSuffix(recording("sf"), "# end calls=2 dropped=0\n") + "10524082230"
	rec := mustRead(t, text)
	assert.Len(t, rec.Calls, 2)
	assert.Equal(t, 4, rec.CutLine)
	assert.Equal(t, int64(-1), rec.Dropped)
	var out bytes.Buffer
	require.NoError(t, WriteText(&out, rec, 5, []Result{Replay(rec, mustCandidate(t, "tdx:"), Options{Outage: 5})}))
	assert.Contains(t, out.String(), "no end line: the recording was cut short; its last line (4) was cut mid-write and is ignored\n")

	rec = mustRead(t, strings.TrimSuffix(recording("sf"), "# end calls=2 dropped=0\n")+"20000000 1000000 success td")
	assert.Len(t, rec.Calls, 2, "a cut line that parses is cut all the same: its name may be cut")

	_, err := Read(strings.NewReader(head + "10524082230\n" + "0 1 success tdx\n"))
	assert.ErrorContains(t, err, "recording:2: want START DURATION CLASS NAME")
	_, err = Read(strings.NewReader(head + "10524082230\n" + "0 1 success tdx"))
	assert.ErrorContains(t, err, "recording:2: want START DURATION CLASS NAME", "a malformed line before a cut one")
}

// TestRoundKeepsShortSpans: a recording of a few fast calls spans less
// than a millisecond, and the report says how long, not "0s".
func TestRoundKeepsShortSpans(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                    "0s",
		303 * time.Microsecond:               "303µs",
		303_400 * time.Nanosecond:            "303µs",
		1500 * time.Millisecond:              "1.5s",
		2*time.Minute + 400*time.Microsecond: "2m0s",
	} {
		if got := round(d); got != want {
			t.Errorf("round(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestReplayReasonsSayWhatFailed: the first trip's reason says what the
// recording says failed, as the runtime words it, naming no type of the
// simulator's: an injected fault as one (it read "recorded failure"), a
// failure that asked for a cooldown with it (it read "retry after 30ms:
// sim.cooldownError: recorded failure asking for 30ms").
func TestReplayReasonsSayWhatFailed(t *testing.T) {
	for pattern, want := range map[string]string{
		"sfff": "recorded failure",
		"siii": "recorded injected fault",
		"sffc": "retry after 30ms: recorded failure asking for 30ms",
	} {
		res := Replay(mustRead(t, recording(pattern)), mustCandidate(t, "tdx:threshold=3 reset=50ms"), Options{Outage: 3})
		assert.Equal(t, 1, res.Trips, pattern)
		assert.Equal(t, want, res.FirstReason, pattern)
	}
}
