package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sample is one benchmark line.
type sample struct {
	ns, bytes, allocs float64
}

// benchResults holds every sample of every benchmark, by full name
// ("BenchmarkSuccess/breakergen-2").
type benchResults struct {
	samples map[string][]sample
	order   []string // first-seen order
	took    time.Duration
	// aligned are the samples of alignedBench from a binary linked with
	// alignedFlag, when it could be built.
	aligned *benchResults
}

// alignedFlag links every function at the start of a 64-byte line (Go's
// default on amd64 is 32 bytes). The keyed rows' string path moves by up
// to a quarter between builds whose code did not change, with where the
// link puts it; aligned, it does not (docs/keys.md). alignedBench is what
// runs from that binary: serial, 1 CPU, beside the default build's rows.
const (
	alignedFlag  = "-ldflags=-funcalign=64"
	alignedBench = "^BenchmarkKeyedSuccess$"
)

// runBenchmarks builds the contend test binary once and runs it o.rounds
// times; each round runs every benchmark once at -cpu 1,2, so the rounds
// interleave and a burst of load from elsewhere touches one sample of many
// benchmarks instead of every sample of one. Each round then runs
// alignedBench from a second binary, linked with alignedFlag; a toolchain
// whose linker has no such flag leaves those rows out.
func runBenchmarks(o options) (benchResults, error) {
	start := time.Now()
	res := benchResults{samples: map[string][]sample{}}
	bin := filepath.Join(o.raw, "contend.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "./contend").CombinedOutput(); err != nil {
		return res, fmt.Errorf("go test -c ./contend: %v\n%s", err, out)
	}
	abin := filepath.Join(o.raw, "contend-aligned.test")
	if out, err := exec.Command("go", "test", "-c", alignedFlag, "-o", abin, "./contend").CombinedOutput(); err != nil {
		fmt.Fprintf(o.log, "benchmarks: no build with %s, its rows are left out: %v\n%s", alignedFlag, err, out)
		abin = ""
	} else {
		res.aligned = &benchResults{samples: map[string][]sample{}}
	}
	var raw, araw bytes.Buffer
	for r := range o.rounds {
		fmt.Fprintf(o.log, "benchmarks: round %d of %d\n", r+1, o.rounds)
		if err := runRound(bin, ".", "1,2", o.benchtime, &raw, &res); err != nil {
			return res, fmt.Errorf("benchmarks, round %d: %w", r+1, err)
		}
		if abin != "" {
			if err := runRound(abin, alignedBench, "1", o.benchtime, &araw, res.aligned); err != nil {
				return res, fmt.Errorf("benchmarks built with %s, round %d: %w", alignedFlag, r+1, err)
			}
		}
	}
	res.took = time.Since(start)
	// The raw outputs, for benchstat.
	if err := os.WriteFile(filepath.Join(o.raw, "bench-aligned.txt"), araw.Bytes(), 0o644); err != nil {
		return res, err
	}
	return res, os.WriteFile(filepath.Join(o.raw, "bench.txt"), raw.Bytes(), 0o644)
}

// runRound runs the benchmarks matching re of test binary bin once each,
// at cpus, and adds their samples to res and their output to raw.
func runRound(bin, re, cpus, benchtime string, raw *bytes.Buffer, res *benchResults) error {
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", re, "-test.benchmem",
		"-test.benchtime", benchtime, "-test.cpu", cpus, "-test.count", "1")
	cmd.Dir = "contend"
	out, err := cmd.CombinedOutput()
	raw.Write(out)
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return res.parse(out)
}

// parse adds the samples of one run's output.
func (r *benchResults) parse(out []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		var s sample
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return fmt.Errorf("benchmark line %q: %v", sc.Text(), err)
			}
			switch f[i+1] {
			case "ns/op":
				s.ns = v
			case "B/op":
				s.bytes = v
			case "allocs/op":
				s.allocs = v
			}
		}
		if _, ok := r.samples[f[0]]; !ok {
			r.order = append(r.order, f[0])
		}
		r.samples[f[0]] = append(r.samples[f[0]], s)
	}
	return sc.Err()
}

// median returns the medians of benchmark name at cpus CPUs, and whether it
// ran.
func (r benchResults) median(name string, cpus int) (sample, int, bool) {
	if cpus > 1 {
		name += "-" + strconv.Itoa(cpus)
	}
	ss := r.samples[name]
	if len(ss) == 0 {
		return sample{}, 0, false
	}
	pick := func(get func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = get(s)
		}
		return median(v)
	}
	return sample{
		ns:     pick(func(s sample) float64 { return s.ns }),
		bytes:  pick(func(s sample) float64 { return s.bytes }),
		allocs: pick(func(s sample) float64 { return s.allocs }),
	}, len(ss), true
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}
