package main

import (
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
		fixtures: []fixture{{name: "synth"}},
		runs: map[string]map[string][]time.Duration{"synth": {
			"breakergen": {time.Second}, "mockgen": {2 * time.Second}, "mockery": {time.Second / 2},
		}},
	}
	beh := behaviour{"breakergen": {"allocs:Success": "0"}}
	ts := report{bench: r, gen: g, behaviour: beh}.targets()
	require.Len(t, ts, 9)
	assert.Contains(t, ts[0].verdict, "met, 1.20× under")           // 10/4 = 2.5 against 3
	assert.Contains(t, ts[0].measured, "**2.50×**")                 //
	assert.Equal(t, "**not measured**", ts[1].verdict)              // no rejection samples
	assert.Equal(t, "**not measured**", ts[3].verdict)              // no RunParallel samples
	assert.Contains(t, ts[4].verdict, "met, 1.25×")                 // 250/10 = 25 against 20
	assert.Contains(t, ts[5].verdict, "**missed**")                 // 12/10 = 1.2 against 1.5
	assert.Equal(t, "met", ts[6].verdict)                           // no allocations
	assert.Contains(t, ts[7].verdict, "met: at least 2.00× faster") // mockgen 2 s
	assert.Contains(t, ts[8].verdict, "**missed**: 2.00× slower")   // mockery 0.5 s

	slow := benchResults{samples: map[string][]sample{}}
	require.NoError(t, slow.parse([]byte(strings.ReplaceAll(sampleOutput, "10.00 ns/op", "14.00 ns/op"))))
	ts = report{bench: slow, gen: g, behaviour: beh}.targets()
	assert.Contains(t, ts[0].verdict, "**missed**: 1.17× over") // 14/4 = 3.5 against 3
}
