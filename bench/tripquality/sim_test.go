package tripquality

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simSets are the breakergen contenders as `breakergen sim` candidates:
// the same settings, in the annotation grammar.
var simSets = map[string]string{
	"breakergen-consecutive": "upstream:threshold=5 reset=30s halfopen=1 successes=1",
	"breakergen-window":      "upstream:window=100 failrate=50% minimum=20 reset=30s halfopen=1 successes=1",
}

// TestSimMatchesTheHarness records the background streams, replays them
// with `breakergen sim` against the breakergen contenders' settings, and
// checks that the simulator counts the trips and the refused calls that
// the harness measured live on the same streams.
func TestSimMatchesTheHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds breakergen")
	}
	bin := filepath.Join(t.TempDir(), "breakergen")
	build := exec.Command("go", "build", "-o", bin, "./cmd/breakergen")
	build.Dir = "../.."
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	// The background rates of the tables, and a half-failing upstream,
	// over 100 s of calls: several OPEN periods of 30 s each, so trips,
	// probes and refusals all count.
	p := short
	p.Calls = 100_000
	for _, rate := range append(p.Background, 0.5) {
		var rec bytes.Buffer
		live := map[string][2]int{}
		synctest.Test(t, func(t *testing.T) {
			require.NoError(t, Record(&rec, p.Seed, p.Calls, rate))
			for _, c := range Contenders {
				if _, ok := simSets[c.Name]; ok {
					trips, refused := Background(c, p.Seed, p.Calls, rate)
					live[c.Name] = [2]int{trips, refused}
				}
			}
		})
		file := filepath.Join(t.TempDir(), "stream.rec")
		require.NoError(t, os.WriteFile(file, rec.Bytes(), 0o644))
		for name, set := range simSets {
			out, err := exec.Command(bin, "sim", "-set", set, file).CombinedOutput()
			require.NoError(t, err, string(out))
			trips, refused := simRow(t, string(out))
			assert.Equal(t, live[name], [2]int{trips, refused}, "%s at %g%% background: [trips refused], live vs sim\n%s", name, rate*100, out)
			if rate == 0.5 {
				assert.Greater(t, trips, 1, "%s: the 50%% stream trips again and again, so the comparison says something", name)
			}
			t.Logf("%s at %g%%: live %v, sim [%d %d]", name, rate*100, live[name], trips, refused)
		}
	}
}

var spaces = regexp.MustCompile(`\s{2,}`)

// simRow returns the trips and refused calls of the one row of a sim report.
func simRow(t *testing.T, report string) (trips, refused int) {
	for _, line := range strings.Split(report, "\n") {
		if !strings.HasPrefix(line, "upstream ") {
			continue
		}
		f := spaces.Split(line, -1)
		require.GreaterOrEqual(t, len(f), 5, line)
		var err error
		trips, err = strconv.Atoi(f[3])
		require.NoError(t, err, line)
		refused, err = strconv.Atoi(f[4])
		require.NoError(t, err, line)
		return trips, refused
	}
	require.Fail(t, fmt.Sprintf("no upstream row in\n%s", report))
	return 0, 0
}
