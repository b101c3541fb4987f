package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simRecording is a recording of tdx: two successes, five failures, and
// the successes after them, one call every 100ms, 1ms each.
const simRecording = `breakergen-recording v1 start=2026-03-02T09:30:00Z unit=ns sample=1
0 1000000 success tdx
100000000 1000000 success tdx
200000000 1000000 failure tdx
300000000 1000000 failure tdx
400000000 1000000 failure tdx
500000000 1000000 failure tdx
600000000 1000000 failure tdx
700000000 1000000 success tdx
800000000 1000000 success tdx
# end calls=9 dropped=0
`

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestSimPrintsOneRowPerCandidate(t *testing.T) {
	rec := writeTemp(t, "calls.rec", simRecording)
	sets := writeTemp(t, "sets.txt", "# more\ntdx:threshold=5 reset=250ms\n")
	page := filepath.Join(t.TempDir(), "bands.html")
	var out, errs bytes.Buffer
	require.NoError(t, run([]string{"sim", "-set", "tdx:threshold=3 reset=1s", "-sets", sets, "-html", page, rec}, &out, &errs), errs.String())
	assert.Equal(t, `recording: 9 calls of 1 breaker over 801ms from 2026-03-02T09:30:00Z; the recorder dropped none
outage: a run of at least 5 calls in a row that failed upstream; to trip: its calls until the trip, the tripping call included

breaker  setting                  calls  trips  refused  open   outages  to trip  first trip
tdx      threshold=3 reset=1s     9      1      4        400ms  1        3        recorded failure
tdx      threshold=5 reset=250ms  9      1      2        200ms  1        5        recorded failure
`, out.String())
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(html), "<svg"))

	var again bytes.Buffer
	require.NoError(t, run([]string{"sim", "-set", "tdx:threshold=3 reset=1s", "-sets", sets, rec}, &again, &errs))
	assert.Equal(t, out.String(), again.String(), "same input, same bytes")
}

func TestSimHelpIsTheManual(t *testing.T) {
	var out, errs bytes.Buffer
	require.NoError(t, run([]string{"sim", "-h"}, &out, &errs))
	for _, want := range []string{"usage: breakergen sim", "Replay:", "outages", "-html FILE"} {
		assert.Contains(t, errs.String(), want)
	}
}

func TestSimBadUsage(t *testing.T) {
	rec := writeTemp(t, "calls.rec", simRecording)
	empty := writeTemp(t, "empty.rec", strings.SplitAfter(simRecording, "\n")[0])
	for args, want := range map[string]string{
		"":                               "want one recording",
		rec:                              "no candidate",
		"-set tdx:bogus=1 " + rec:        "unknown key",
		"-set sina:threshold=1 " + rec:   `no call of breaker "sina" in the recording (it has calls of "tdx")`,
		"-set sina:threshold=1 " + empty: `no call of breaker "sina" in the recording (it has no calls)`,
		"-outage 0 -set tdx: " + rec:     "-outage 0: want at least 1",
		"-set tdx: /nonexistent":         "no such file",
	} {
		var out, errs bytes.Buffer
		err := run(append([]string{"sim"}, strings.Fields(args)...), &out, &errs)
		if assert.Error(t, err, args) {
			assert.Contains(t, err.Error()+errs.String(), want, args)
		}
	}
}

// TestSimRefusesToWriteThePageOverTheRecording: -html naming the
// recording (by any path) would overwrite it.
func TestSimRefusesToWriteThePageOverTheRecording(t *testing.T) {
	rec := writeTemp(t, "calls.rec", simRecording)
	link := filepath.Join(t.TempDir(), "link.rec")
	require.NoError(t, os.Symlink(rec, link))
	for _, page := range []string{rec, link} {
		var out, errs bytes.Buffer
		err := run([]string{"sim", "-set", "tdx:", "-html", page, rec}, &out, &errs)
		require.Error(t, err, page)
		assert.Contains(t, errs.String(), "-html "+page+": that is the recording")
		text, err := os.ReadFile(rec)
		require.NoError(t, err)
		assert.Equal(t, simRecording, string(text), "the recording is untouched")
	}
}

// TestSimPrintsTheGeneratorsWarnings: a candidate the generator would warn
// about is replayed, with the generator's warning on stderr.
func TestSimPrintsTheGeneratorsWarnings(t *testing.T) {
	rec := writeTemp(t, "calls.rec", simRecording)
	var out, errs bytes.Buffer
	require.NoError(t, run([]string{"sim", "-set", "tdx:window=100 minimum=500", "-set", "tdx:window=100 slowrate=50%", rec}, &out, &errs))
	assert.Equal(t, `breakergen sim: -set: tdx: warning: minimum=500 of breaker "tdx" is above window=100, which holds at most 100 calls: the rates apply once it holds 100; give minimum=100 or less
breakergen sim: -set: tdx: warning: slowrate of breaker "tdx" has no effect without slow=D, the duration past which a call is slow; give slow=D too
`, errs.String())
	assert.Contains(t, out.String(), "window=100 minimum=500")
}
