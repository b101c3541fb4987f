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
	require.Len(t, ts, 11)
	assert.Contains(t, ts[0].measured, "**1.25×**")                // 10/8 against the floor
	assert.Contains(t, ts[0].verdict, "met, 1.00× under")          // exactly at the bound
	assert.Contains(t, ts[1].verdict, "met, 1.25× above")          // 250/10 = 25 against 20
	assert.Contains(t, ts[2].verdict, "**missed**: 1.25× short")   // 12/10 = 1.2 against 1.5
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
