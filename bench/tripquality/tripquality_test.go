package tripquality

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	full  = flag.Bool("full", false, "measure the table of BENCHMARKS.md (Full: a million calls per rate, eleven outage runs) instead of a short stream")
	table = flag.Bool("table", false, "print the tables as Markdown")
	out   = flag.String("out", "", "write the tables as Markdown to `file` (for bench/cmd/report)")
)

// short are the parameters of the test: the streams of Full, cut short.
var short = Params{
	Seed: 1, Calls: 20_000, Background: Full.Background,
	Outages: Full.Outages, OutageBackground: Full.OutageBackground, Warmup: 2_000, Cap: 20_000, Runs: 3,
}

// TestTripQuality measures every contender (a short stream unless -full)
// and checks that the tables are well-formed and that what is certain
// holds: the two consecutive breakers trip alike, and after exactly
// Threshold calls of a total outage. With -table it prints the tables,
// with -out it writes them:
//
//	go test ./tripquality -run TestTripQuality -full -table
func TestTripQuality(t *testing.T) {
	p := short
	if *full {
		p = Full
	}
	var tab Table
	synctest.Test(t, func(t *testing.T) { tab = Measure(p, Contenders) })

	require.Len(t, tab.Rows, len(Contenders))
	rows := map[string]Row{}
	for _, r := range tab.Rows {
		rows[r.Contender.Name] = r
		require.Len(t, r.Trips, len(p.Background), r.Contender.Name)
		require.Len(t, r.Refused, len(p.Background), r.Contender.Name)
		require.Len(t, r.ToTrip, len(p.Outages), r.Contender.Name)
		for i := range p.Background {
			assert.GreaterOrEqual(t, r.Trips[i], 0)
			assert.LessOrEqual(t, r.Refused[i], p.Calls)
			if r.Trips[i] == 0 {
				assert.Zero(t, r.Refused[i], "%s: refusals without a trip", r.Contender.Name)
			} else {
				assert.Positive(t, r.Refused[i], "%s: a trip refuses calls until its reset has passed", r.Contender.Name)
			}
		}
		for i, runs := range r.ToTrip {
			require.Len(t, runs, p.Runs)
			for _, n := range runs {
				assert.True(t, n == -1 || n >= 1 && n <= p.Cap, "%s: %d calls to trip at %g", r.Contender.Name, n, p.Outages[i])
			}
		}
	}
	for _, name := range []string{"gobreaker-consecutive", "breakergen-consecutive"} {
		for _, n := range rows[name].ToTrip[len(p.Outages)-1] {
			assert.Equal(t, Threshold, n, "%s in a total outage", name)
		}
	}
	gb, bg := rows["gobreaker-consecutive"], rows["breakergen-consecutive"]
	assert.Equal(t, gb.Trips, bg.Trips, "the same stream trips two consecutive breakers alike")
	assert.Equal(t, gb.Refused, bg.Refused)
	assert.Positive(t, bg.Trips[len(p.Background)-1], "at 20%% a consecutive breaker trips (about 250 times per million calls)")

	md := tab.Markdown()
	lines := strings.Split(md, "\n")
	var tables [][]string // blocks of consecutive table lines
	for i, l := range lines {
		switch {
		case !strings.HasPrefix(l, "|"):
		case i > 0 && strings.HasPrefix(lines[i-1], "|"):
			tables[len(tables)-1] = append(tables[len(tables)-1], l)
		default:
			tables = append(tables, []string{l})
		}
	}
	require.Len(t, tables, 2)
	for _, tb := range tables {
		require.Len(t, tb, 2+len(tab.Rows), "a header, a rule and a row per contender")
		for i, l := range tb {
			assert.Equal(t, strings.Count(tb[0], "|"), strings.Count(l, "|"), "columns of %q", l)
			if i >= 2 {
				assert.True(t, strings.HasPrefix(l, "| "+tab.Rows[i-2].Contender.Name+" |"), l)
				assert.NotContains(t, l, "| |", "no empty cell")
			}
		}
	}
	for _, rate := range p.Background {
		assert.Contains(t, md, fmt.Sprintf(" %g%% |", rate*100))
	}
	if *table {
		fmt.Print(md)
	}
	if *out != "" {
		require.NoError(t, os.WriteFile(*out, []byte(md), 0o644))
	}
}

func TestSpread(t *testing.T) {
	assert.Equal(t, "5", spread([]int{5}))
	assert.Equal(t, "none", spread([]int{-1}))
	assert.Equal(t, "7 (3–9)", spread([]int{9, 3, 7}))
	assert.Equal(t, "9 (3–none)", spread([]int{-1, 3, 9}))
}
