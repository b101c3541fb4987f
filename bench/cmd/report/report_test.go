package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleOutput = `goos: linux
BenchmarkSuccess/direct        	27236317	         4.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkSuccess/direct-2      	27166327	         4.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkSuccess/breakergen    	 5129469	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSuccess/breakergen-2  	 6239521	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSuccess/gobreaker-execute           	  576866	       250.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkSuccess/resiliency                  	 4754354	        12.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSuccess/breakergen-chain            	 4754354	        15.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSuccess/floor                       	 4754354	         8.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkFailure/breakergen                  	 4754354	       100.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkFailure/gobreaker-execute           	 4754354	       250.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkFailure/resiliency                  	 4754354	        90.00 ns/op	       0 B/op	       0 allocs/op
PASS
`

func TestParseAndMedian(t *testing.T) {
	r := benchResults{samples: map[string][]sample{}}
	require.NoError(t, r.parse([]byte(sampleOutput)))
	require.NoError(t, r.parse([]byte(strings.ReplaceAll(sampleOutput, "10.00 ns/op", "30.00 ns/op"))))
	require.NoError(t, r.parse([]byte(strings.ReplaceAll(sampleOutput, "10.00 ns/op", "20.00 ns/op"))))

	s, n, ok := r.median("BenchmarkSuccess/breakergen", 2)
	require.True(t, ok)
	assert.Equal(t, 3, n)
	assert.Equal(t, 20.0, s.ns)
	_, _, ok = r.median("BenchmarkSuccess/hystrix", 1)
	assert.False(t, ok)
	assert.Equal(t, []string{"BenchmarkSuccess/direct", "BenchmarkSuccess/direct-2"}, r.order[:2])
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
}

func TestTargets(t *testing.T) {
	r := benchResults{samples: map[string][]sample{}}
	require.NoError(t, r.parse([]byte(sampleOutput)))
	g := genResults{
		fixtures: []fixture{{name: "synth"}, {name: "synthone"}, {name: "httpgen"}},
		runs: map[string]map[string][]time.Duration{
			"synth":    {"breakergen": {time.Second}, "mockgen-source": {2 * time.Second}},
			"synthone": {"breakergen": {time.Second}, "mockgen-source": {time.Second / 2}},
			"httpgen":  {"breakergen": {time.Second}, "mockgen-source": {time.Second / 10}}, // not a target
		},
	}
	w := weightResults{
		fixture: fixture{methods: 2000},
		lines:   map[string]int{"breakergen": 6000, "mockgen": 36000},
		runs: map[string][]compileRun{
			"breakergen": {{wall: 5 * time.Second, rss: 400 << 10}},
			"mockgen":    {{wall: 10 * time.Second, rss: 500 << 10}},
			"sources":    {{wall: time.Second, rss: 100 << 10}},
		},
	}
	beh := behaviour{"breakergen": {"allocs:Success": "0", "allocs:Chain": "0"}}
	ts := report{bench: r, gen: g, weight: w, behaviour: beh}.targets()
	require.Len(t, ts, 12)
	assert.Contains(t, ts[0].measured, "**1.25×**")                // 10/8 against the floor
	assert.Contains(t, ts[0].verdict, "met, 1.00× under")          // exactly at the bound
	assert.Contains(t, ts[1].verdict, "met, 1.25× above")          // 250/10 = 25 against 20
	assert.Contains(t, ts[2].measured, "0.9 × 1.50× = 1.35×")      // the floor: 12/8 = 1.5
	assert.Contains(t, ts[2].verdict, "**missed**: 1.13× short")   // 12/10 = 1.2 against 1.35
	assert.Contains(t, ts[3].verdict, "met, 1.25× under")          // 100/250 = 0.4 against 0.5
	assert.Contains(t, ts[4].verdict, "**missed**: 1.11× over")    // 100/90 against 1
	assert.Equal(t, "**not measured**", ts[5].verdict)             // no rejection samples
	assert.Contains(t, ts[6].verdict, "met, 1.33× under")          // chain 15/10 = 1.5 against 2
	assert.Equal(t, "met", ts[7].verdict)                          // no allocations
	assert.Contains(t, ts[7].measured, "Chain 0")                  //
	assert.Contains(t, ts[8].measured, "**3.0** lines a method")   // 6000/2000
	assert.Contains(t, ts[8].verdict, "met")                       //
	assert.Contains(t, ts[9].measured, "**5.0 s** and 400 MiB")    //
	assert.Contains(t, ts[9].verdict, "met, 2.00× under")          // 5 s against 10 s
	assert.Contains(t, ts[10].verdict, "**missed**: 2.00× slower") // synthone: 0.5 s against 1 s
	assert.NotContains(t, ts[10].measured, "httpgen")              // 200 × 10 only
	assert.Contains(t, ts[11].measured, "**2.00×**")               // synthone: 1 s against 0.5 s
	assert.Contains(t, ts[11].verdict, "**missed**: 4.00× over")   // against 0.5

	slow := benchResults{samples: map[string][]sample{}}
	require.NoError(t, slow.parse([]byte(strings.ReplaceAll(sampleOutput, "10.00 ns/op", "12.00 ns/op"))))
	ts = report{bench: slow, gen: g, weight: w, behaviour: beh}.targets()
	assert.Contains(t, ts[0].verdict, "**missed**: 1.20× over") // 12/8 = 1.5 against 1.25
}

func TestMarkdown(t *testing.T) {
	r := benchResults{samples: map[string][]sample{}}
	require.NoError(t, r.parse([]byte(sampleOutput)))
	g := genResults{
		fixtures: fixtures(),
		tools:    []tool{{name: "breakergen", version: "commit x", about: "in the package"}},
		runs:     map[string]map[string][]time.Duration{"synth": {"breakergen": {time.Second, 2 * time.Second}}},
		lines:    map[string]map[string]int{"synth": {"breakergen": 4000}},
	}
	w := weightResults{fixture: g.fixtures[0], lines: map[string]int{"breakergen": 6000},
		runs: map[string][]compileRun{"breakergen": {{wall: 5 * time.Second, rss: 400 << 10}}}}
	md := report{bench: r, gen: g, weight: w}.markdown()
	assert.Contains(t, md, "| wrapper, success | 10.0 | 10.0 | – | – | 1.25× / – | 2.50× / – | 0 |")
	assert.Contains(t, md, "| synth (200 interfaces × 10 methods, 20 files) | breakergen | 1500 ms | 1000 ms | 2000 ms | 1.00× | 4000 | 2.0 |")
	assert.Contains(t, md, "| with breakergen's wrappers | 6000 | 3.0 | 5.0 s | 5.0 s | 5.0 s | – | 400 MiB |")
}

// TestOrdinary: the ordinary packages' and the 20 packages' tables, the
// ordinary packages in SPEC §7's generator target, as its worst layout,
// and the one-file package beside issue 23's half of mockgen -source.
func TestOrdinary(t *testing.T) {
	g := genResults{
		fixtures: []fixture{{name: "synth"}, {name: "synthone"}},
		runs: map[string]map[string][]time.Duration{
			"synth":    {"breakergen": {time.Second}, "mockgen-source": {4 * time.Second}},
			"synthone": {"breakergen": {time.Second}, "mockgen-source": {3 * time.Second}},
		},
		ordinary: ordinaryResults{
			layouts: []ordinaryLayout{
				{fixture: fixture{name: "ordinary"}, title: "ordinary (20 files)",
					runs: map[string][]time.Duration{
						"breakergen":     {100 * time.Millisecond, 300 * time.Millisecond, 200 * time.Millisecond},
						"mockgen-source": {500 * time.Millisecond},
						"mockery":        {400 * time.Millisecond},
					},
					lines: map[string]int{"breakergen": 34000, "mockgen-source": 36000, "mockery": 130000}},
				{fixture: fixture{name: "ordinaryone"}, title: "ordinaryone (one file)",
					runs: map[string][]time.Duration{
						"breakergen":     {200 * time.Millisecond},
						"mockgen-source": {300 * time.Millisecond},
					},
					lines: map[string]int{"breakergen": 34000, "mockgen-source": 36000}},
			},
			gen20:   map[string][]time.Duration{"breakergen": {time.Second}, "mockgen-source": {3 * time.Second}},
			lines20: map[string]int{"breakergen": 1700, "mockgen-source": 1800},
		},
	}
	md := report{gen: g, opts: options{genruns: 3}}.markdown()
	assert.Contains(t, md, "### In an ordinary package\n\n")
	assert.Contains(t, md, "| ordinary (20 files) | breakergen | 200 ms | 100 ms | 300 ms | 1.00× | 34000 |")
	assert.Contains(t, md, "| ordinary (20 files) | mockgen-source | 500 ms | 500 ms | 500 ms | 2.50× | 36000 |")
	assert.Contains(t, md, "| ordinaryone (one file) | mockgen-source | 300 ms | 300 ms | 300 ms | 1.50× | 36000 |")
	assert.NotContains(t, md, "| mockgen-package |", "a tool that did not run")
	assert.Contains(t, md, "### go generate over 20 packages\n\n")
	assert.Contains(t, md, "| mockgen-source | 3000 ms | 3000 ms | 3000 ms | 3.00× | 1800 |")
	var gen, half target
	for _, tg := range (report{gen: g}).targets() {
		switch {
		case strings.HasPrefix(tg.name, "generator faster"):
			gen = tg
		case strings.HasPrefix(tg.name, "generator at most 0.5×"):
			half = tg
		}
	}
	assert.Contains(t, gen.measured, "synth in an ordinary package (its mocks beside it): breakergen 200 ms, mockgen -source 500 ms (2.50×)")
	assert.Contains(t, gen.measured, "synthone in an ordinary package (its mocks beside it): breakergen 200 ms, mockgen -source 300 ms (1.50×)")
	assert.Equal(t, "met: 1.50× faster on the worse layout", gen.verdict)
	assert.Equal(t, "breakergen **1000 ms**, mockgen -source 3000 ms: **0.33×**; in an ordinary package, its mocks beside it, 200 ms against 300 ms (0.67×)", half.measured)
	assert.Equal(t, "met, 1.50× under the limit", half.verdict)

	assert.NotContains(t, report{gen: genResults{}}.markdown(), "ordinary package", "no section without a measurement")
}

func TestTripQualitySection(t *testing.T) {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	report{}.tripQualitySection(p)
	assert.Empty(t, b.String(), "no section without a measurement")
	report{tripQuality: "| contender | 1% |\n| --- | ---: |\n| x | 0 (0) |\n"}.tripQualitySection(p)
	assert.Contains(t, b.String(), "## Trip quality\n\n")
	assert.Contains(t, b.String(), "| x | 0 (0) |\n")
}

// TestRunTripQuality runs the measurement the report makes (the Full
// tables, a few seconds) and checks that it comes back as Markdown tables.
func TestRunTripQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the full tables")
	}
	t.Chdir("../..") // where the report runs: bench/
	md, err := runTripQuality(options{log: io.Discard, raw: t.TempDir()})
	require.NoError(t, err)
	assert.Contains(t, md, "| breakergen-consecutive |")
	assert.Contains(t, md, "over 1000000 calls at each rate")
}

// costOutput is one run of the window and load benchmarks, with round
// numbers: every ratio below is exact.
const costOutput = `goos: linux
BenchmarkWindowSuccess/none         	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccess/none-2       	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccess/count        	 1000	        12.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccess/count-2      	 1000	        12.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccess/time         	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccess/time-2       	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccessParallel/none     	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccessParallel/none-2   	 1000	         5.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccessParallel/count    	 1000	        12.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccessParallel/count-2  	 1000	         8.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccessParallel/time     	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccessParallel/time-2   	 1000	        40.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/breakergen                	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/breakergen-2              	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/breakergen-concurrency    	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/breakergen-concurrency-2  	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/breakergen-throttle       	 1000	        20.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/failsafe-bulkhead         	 1000	        60.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/failsafe-bulkhead-2       	 1000	        60.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/failsafe-bulkhead-executor	 1000	       300.0 ns/op	      96 B/op	       2 allocs/op
BenchmarkLoad/failsafe-throttler        	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoad/failsafe-throttler-executor	 1000	       200.0 ns/op	      48 B/op	       1 allocs/op
BenchmarkLoadParallel/breakergen        	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoadParallel/breakergen-2      	 1000	         5.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoadParallel/breakergen-concurrency	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoadParallel/breakergen-concurrency-2	 1000	        25.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoadParallel/failsafe-bulkhead-2	 1000	       100.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkLoadParallel/failsafe-bulkhead-executor-2	 1000	       250.0 ns/op	      96 B/op	       2 allocs/op
PASS
`

// TestTimedWindowVerdictAgainstClock2: the verdict on slow and inflight
// states both bounds: against no window (issue 24's 3×) and against
// clock2, the two clock reads that are their floor.
func TestTimedWindowVerdictAgainstClock2(t *testing.T) {
	r := benchResults{samples: map[string][]sample{}}
	require.NoError(t, r.parse([]byte(`BenchmarkWindowSuccess/none         	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccess/slow         	 1000	        90.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccess/inflight     	 1000	        60.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkWindowSuccess/clock2       	 1000	        60.00 ns/op	       0 B/op	       0 allocs/op
`)))
	win := report{bench: r}.windowTargets()
	require.Len(t, win, 9)
	assert.Contains(t, win[5].name, "slow at most 3× no window (issue 24); within 1.25× of clock2")
	assert.Equal(t, "**missed**: 3.00× over (200.0% above the limit); against clock2, the floor: **1.50×**, **missed**: 1.20× over (20.0% above the limit)", win[5].verdict) // 90/10 against 3, 90/60 against 1.25
	assert.Equal(t, "**missed**: 2.00× over (100.0% above the limit); against clock2, the floor: **1.00×**, met, 1.25× under the limit", win[7].verdict)                     // 60/10 against 3, 60/60
}

func TestHedgeSection(t *testing.T) {
	r := benchResults{samples: map[string][]sample{}}
	require.NoError(t, r.parse([]byte(`BenchmarkHedgeSuccess/chain         	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkHedgeSuccess/hedged        	 1000	       250.0 ns/op	      32 B/op	       1 allocs/op
`)))
	rep := report{bench: r}
	ts := rep.hedgeTargets()
	require.Len(t, ts, 2)
	assert.Contains(t, ts[0].measured, "**250 ns**")
	assert.Contains(t, ts[0].measured, "25.00× the chain without hedge")
	assert.Contains(t, ts[0].verdict, "met, 1.20× under")
	assert.Equal(t, "met", ts[1].verdict)
	assert.Contains(t, rep.markdown(), "## Hedged chains: cost\n\n")
	assert.Contains(t, report{bench: benchResults{samples: map[string][]sample{}}}.hedgeTargets()[0].verdict, "not measured")
}

func TestCostSections(t *testing.T) {
	r := benchResults{samples: map[string][]sample{}}
	require.NoError(t, r.parse([]byte(costOutput)))
	rep := report{bench: r}

	win := rep.windowTargets()
	require.Len(t, win, 9)
	assert.Contains(t, win[0].measured, "**1.20×** (serial, 1 CPU)")                                                     // 12/10
	assert.Contains(t, win[0].measured, "RunParallel 1 CPU 1.20×, 2 CPUs 1.60×")                                         // 12/10, 8/5
	assert.Contains(t, win[0].verdict, "met, 1.25× under")                                                               // 1.2 against 1.5
	assert.Contains(t, win[1].measured, "**1.50×** the calls a second")                                                  // 12/8
	assert.Contains(t, win[1].measured, "no window 2.00× (75% of its speedup)")                                          // 10/5
	assert.Equal(t, "met, scales 1.50×", win[1].verdict)                                                                 //
	assert.Equal(t, "**missed**: 0.75× at 2 CPUs", win[2].verdict)                                                       // 30/40
	assert.Contains(t, win[2].name, "time window")                                                                       //
	assert.Contains(t, win[3].measured, "**3.00×** (serial, 1 CPU)")                                                     // 30/10
	assert.Contains(t, win[3].verdict, "**missed**: 1.50× over")                                                         // 3 against 2
	assert.Contains(t, win[4].measured, "**0.38** of its speedup")                                                       // (30/40)/(10/5)
	assert.Contains(t, win[4].verdict, "**missed**")                                                                     //
	assert.Contains(t, win[5].name, "slow at most 3×")                                                                   //
	assert.Equal(t, "**not measured**", win[5].verdict)                                                                  // no slow row in this run
	assert.Contains(t, win[8].name, "inflight scales")                                                                   //
	assert.Equal(t, "**not measured**", win[8].verdict)                                                                  //
	assert.Contains(t, rep.scaleTarget("x", ref{"Load", "breakergen-throttle"}, loadPlain, "y").verdict, "not measured") // no RunParallel samples

	load := rep.loadTargets()
	require.Len(t, load, 3)
	assert.Contains(t, load[0].measured, "**3.00×** (serial, 1 CPU)")             // 30/10
	assert.Contains(t, load[0].measured, "RunParallel 1 CPU 3.00×, 2 CPUs 5.00×") // 25/5
	assert.Contains(t, load[0].verdict, "**missed**: 2.00× over")                 // 3 against 1.5
	assert.Contains(t, load[1].measured, "**2.00× faster** than `failsafe-bulkhead`")
	assert.Contains(t, load[1].measured, "serial 1 CPU 2.00× / 10.00×") // 60/30, 300/30
	assert.Contains(t, load[1].measured, "serial 2 CPUs 2.00× / –")     // no executor sample at 2 CPUs
	assert.Contains(t, load[1].measured, "RunParallel 2 CPUs 4.00× / 10.00×")
	assert.Equal(t, "met, 2.00× faster", load[1].verdict)
	assert.Contains(t, load[2].measured, "serial 1 CPU 0.50× / 10.00×") // 10/20, 200/20
	assert.Contains(t, load[2].measured, "`breakergen-throttle` **2.00× slower** than `failsafe-throttler`")
	assert.Equal(t, "**missed**: 2.00× slower", load[2].verdict)

	md := rep.markdown()
	assert.Contains(t, md, "## Trip conditions over a window: cost\n\n")
	assert.Contains(t, md, "| count window at most 1.5× no window | **1.20×**")
	assert.Contains(t, md, "| none | 10.0 (1.00×) | 10.0 (1.00×) | 10.0 (1.00×) | 5.00 (1.00×) | 0 | 0 |")
	assert.Contains(t, md, "| count | 12.0 (1.20×) | 12.0 (1.20×) | 12.0 (1.20×) | 8.00 (1.60×) | 0 | 0 |")
	assert.Contains(t, md, "| time | 30.0 (3.00×) | 30.0 (3.00×) | 30.0 (3.00×) | 40.0 (8.00×) | 0 | 0 |")
	assert.Contains(t, md, "## Load control: cost\n\n")
	assert.Contains(t, md, "| concurrency at most 1.5× without it | **3.00×**")
	assert.Contains(t, md, "| breakergen-concurrency | 30.0 (3.00×) | 30.0 (3.00×) | 30.0 (3.00×) | 25.0 (5.00×) | 0 | 0 |")
	assert.Contains(t, md, "| breakergen-throttle | 20.0 (2.00×) | – | – | – | 0 | 0 |")
	assert.Contains(t, md, "| failsafe-bulkhead-executor | 300 (30.00×) | – | – | 250 (50.00×) | 96 | 2 |")
	assert.NotContains(t, md, "| breakergen-both |", "a row that did not run")
	assert.Less(t, strings.Index(md, "## Load control: cost"), strings.Index(md, "## Behaviour"))

	none := report{bench: benchResults{samples: map[string][]sample{}}}.markdown()
	assert.NotContains(t, none, "## Trip conditions over a window")
	assert.NotContains(t, none, "## Load control")
}

func TestKeyedSection(t *testing.T) {
	r := benchResults{samples: map[string][]sample{}}
	require.NoError(t, r.parse([]byte(`BenchmarkKeyedSuccess/plain         	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccess/string        	 1000	        25.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccess/int           	 1000	        40.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccessParallel/plain 	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccessParallel/plain-2	 1000	         5.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccessParallel/string	 1000	        25.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccessParallel/string-2	 1000	        25.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccessParallel/int   	 1000	        40.00 ns/op	      16 B/op	       1 allocs/op
`)))
	rep := report{bench: r}
	ts := rep.keyedTargets()
	require.Len(t, ts, 5)
	assert.Contains(t, ts[0].measured, "**2.50×** (serial, 1 CPU)") // 25/10
	assert.Contains(t, ts[0].verdict, "met, 1.20× under")           // 2.5 against 3
	assert.Contains(t, ts[1].measured, "**0.50** of its speedup")   // (25/25)/(10/5)
	assert.Contains(t, ts[1].verdict, "**missed**")                 //
	assert.Contains(t, ts[2].verdict, "**missed**: 1.33× over")     // 4 against 3
	assert.Contains(t, ts[3].verdict, "not measured")               // no int-2 sample
	assert.Equal(t, "**missed**: 1 allocs/op", ts[4].verdict)       //
	md := rep.markdown()
	assert.Contains(t, md, "## Breakers per key: cost\n\n")
	assert.Contains(t, md, "| string | 25.0 (2.50×) |")
	assert.NotContains(t, report{bench: benchResults{samples: map[string][]sample{}}}.markdown(), "## Breakers per key")

	// A run with the skewed rows and those in a random order bounds them
	// too, before the allocations.
	require.NoError(t, r.parse([]byte(`BenchmarkKeyedSuccess/string-zipf   	 1000	        20.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccess/int-zipf      	 1000	        35.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccess/string-uniform	 1000	        50.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccess/int-uniform   	 1000	        28.00 ns/op	       0 B/op	       0 allocs/op
`)))
	ts = report{bench: r}.keyedTargets()
	require.Len(t, ts, 9)
	assert.Contains(t, ts[4].name, "string key, skewed traffic (Zipf)")
	assert.Contains(t, ts[4].verdict, "met, 1.50× under")       // 2 against 3
	assert.Contains(t, ts[5].verdict, "**missed**: 1.17× over") // 3.5 against 3
	assert.Contains(t, ts[6].name, "string key, keys in a random order")
	assert.Contains(t, ts[6].verdict, "**missed**: 1.67× over") // 5 against 3
	assert.Contains(t, ts[7].name, "integer key, keys in a random order")
	assert.Contains(t, ts[7].verdict, "met, 1.07× under") // 2.8 against 3
	md = report{bench: r}.markdown()
	assert.Contains(t, md, "| string-zipf | 20.0 (2.00×) |")
	assert.Contains(t, md, "| string-uniform | 50.0 (5.00×) |")

	// A run with the hot key's rows checks how they scale, before the
	// allocations; a row without its 2-CPU sample is left out.
	require.NoError(t, r.parse([]byte(`BenchmarkKeyedHotKeyParallel/plain 	 1000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedHotKeyParallel/plain-2	 1000	         5.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedHotKeyParallel/string	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedHotKeyParallel/string-2	 1000	        20.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedHotKeyParallel/int   	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
`)))
	ts = report{bench: r}.keyedTargets()
	require.Len(t, ts, 10)
	assert.Contains(t, ts[8].name, "string key, one hot key")
	assert.Contains(t, ts[8].measured, "**0.75** of its speedup") // (30/20)/(10/5)
	assert.Contains(t, ts[8].verdict, "**missed**")
	assert.Contains(t, ts[9].name, "keyed success path: 0 allocations")

	// Without the aligned build's rows and the floor's, neither table
	// shows; with them, each row is over its own build's plain row.
	md = report{bench: r}.markdown()
	assert.NotContains(t, md, "`-funcalign=64` |")
	assert.NotContains(t, md, "`contend.KeyFloor`")
	r.aligned = &benchResults{samples: map[string][]sample{}}
	require.NoError(t, r.aligned.parse([]byte(`BenchmarkKeyedSuccess/plain         	 1000	        12.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedSuccess/string        	 1000	        30.00 ns/op	       0 B/op	       0 allocs/op
`)))
	require.NoError(t, r.parse([]byte(`BenchmarkKeyedFloor/keys=10000/count=false	 1000	        16.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedFloor/keys=10000/lanes      	 1000	        26.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedFloor/keys=1000/lanes-family-slots	 1000	        99.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedFloor/keys=10000/uniform/lanes	 1000	        45.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedFloor/keys=10000/uniform/count=true	 1000	        35.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkKeyedFloor/keys=10000/call-slots	 1000	        24.00 ns/op	       0 B/op	       0 allocs/op
`)))
	md = report{bench: r}.markdown()
	assert.Contains(t, md, "| row | default build | `-funcalign=64` |")
	assert.Contains(t, md, "| string | 25.0 (2.50×) | 30.0 (2.50×) |") // 25/10 and 30/12
	assert.Contains(t, md, "| int | 40.0 (4.00×) | – |")
	assert.Contains(t, md, "| count=false | 16.0 (1.60×) | – |") // over the default build's plain row
	assert.Contains(t, md, "| count=true | – | 35.0 (3.50×) |")  // only the random order's row ran
	assert.Contains(t, md, "| lanes | 26.0 (2.60×) | 45.0 (4.50×) |")
	assert.NotContains(t, md, "| lanes-family-slots |") // only the 1,000-key row ran
	assert.Contains(t, md, "| call-slots | 24.0 (2.40×) | – |")
	assert.NotContains(t, md, "| pinned-adds |") // did not run
}
