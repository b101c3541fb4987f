package main

import (
	"fmt"
	"strings"
)

// target is one goal of the issue and what this run says about it.
type target struct {
	name, measured, verdict string
}

// speedup returns how many times faster breakergen is than peer on a
// success at cpus, serial or parallel.
func (r report) speedup(peer string, parallel bool, cpus int) float64 {
	name := "BenchmarkSuccess"
	if parallel {
		name += "Parallel"
	}
	p, _, ok1 := r.bench.median(name+"/"+peer, cpus)
	g, _, ok2 := r.bench.median(name+"/breakergen", cpus)
	if !ok1 || !ok2 || g.ns == 0 {
		return 0
	}
	return p.ns / g.ns
}

func (r report) speedTarget(peer, label string, want float64) target {
	head := r.speedup(peer, false, 1)
	others := fmt.Sprintf("serial 2 CPUs %.2f×, RunParallel 1 CPU %.2f×, 2 CPUs %.2f×",
		r.speedup(peer, false, 2), r.speedup(peer, true, 1), r.speedup(peer, true, 2))
	t := target{
		name:     fmt.Sprintf("breakergen's success path at least %g× faster than %s", want, label),
		measured: fmt.Sprintf("**%.2f×** (serial, 1 CPU); %s", head, others),
	}
	p, _, ok1 := r.bench.median("BenchmarkSuccess/"+peer, 1)
	f, _, ok2 := r.bench.median("BenchmarkSuccess/floor-defer", 1)
	if ok1 && ok2 && f.ns > 0 {
		t.measured += fmt.Sprintf(". Ceiling: floor-defer, a wrapper with no breaker that only defers a recover, is %.2f× faster than %s", p.ns/f.ns, label)
	}
	if head >= want {
		t.verdict = fmt.Sprintf("met, %.2f× above the target", head/want)
	} else {
		t.verdict = fmt.Sprintf("**missed**: %.2f× short (%.1f%% of the target)", want/head, 100*head/want)
	}
	return t
}

// ratio returns breakergen's ns/op in scenario sc over the direct call's in
// scenario base (serial or RunParallel, at cpus).
func (r report) ratio(sc, base string, parallel bool, cpus int) (float64, bool) {
	if parallel {
		sc, base = sc+"Parallel", base+"Parallel"
	}
	g, _, ok1 := r.bench.median("Benchmark"+sc+"/breakergen", cpus)
	d, _, ok2 := r.bench.median("Benchmark"+base+"/direct", cpus)
	if !ok1 || !ok2 || d.ns == 0 {
		return 0, false
	}
	return g.ns / d.ns, true
}

// overheadTarget is one of the runtime issue's limits: breakergen's path in
// scenario sc at most want times the direct call of scenario base.
func (r report) overheadTarget(sc, base, path string, want float64, floor string) target {
	t := target{name: fmt.Sprintf("breakergen's %s path at most %g× the direct call", path, want)}
	head, ok := r.ratio(sc, base, false, 1)
	if !ok {
		t.measured, t.verdict = "no samples", "**not measured**"
		return t
	}
	s2, _ := r.ratio(sc, base, false, 2)
	p1, _ := r.ratio(sc, base, true, 1)
	p2, _ := r.ratio(sc, base, true, 2)
	t.measured = fmt.Sprintf("**%.2f×** (serial, 1 CPU); serial 2 CPUs %.2f×, RunParallel 1 CPU %.2f×, 2 CPUs %.2f×", head, s2, p1, p2)
	if floor != "" {
		t.measured += ". " + floor
	}
	if head <= want {
		t.verdict = fmt.Sprintf("met, %.2f× under the limit", want/head)
	} else {
		t.verdict = fmt.Sprintf("**missed**: %.2f× over (%.1f%% above the limit)", head/want, 100*(head/want-1))
	}
	return t
}

func (r report) targets() []target {
	var floor string
	f, _, ok1 := r.bench.median("BenchmarkSuccess/floor-defer", 1)
	d, _, ok2 := r.bench.median("BenchmarkSuccess/direct", 1)
	if ok1 && ok2 && d.ns > 0 {
		floor = fmt.Sprintf("Floor: floor-defer, a wrapper with no breaker that only defers the recover SPEC §3's panic rule needs, is %.2f× the direct call by itself", f.ns/d.ns)
	}
	ts := []target{
		r.overheadTarget("Success", "Success", "success", 3, floor),
		r.overheadTarget("Rejection", "Success", "rejection", 3, ""),
		r.overheadTarget("Failure", "Failure", "failure", 6,
			"Each failure reads the clock for the exact last-failure time SPEC §4 asks for; runtime's BenchmarkClockNow measures that read"),
		r.scalingTarget(0.7),
		r.speedTarget("gobreaker-execute", "gobreaker's Execute", 20),
		r.speedTarget("resiliency", "go-resiliency's Run", 1.5),
	}

	// Allocations: the median allocs/op of every breakergen benchmark, and
	// testing.AllocsPerRun of one call on each path (behaviour test).
	var paths []string
	worstMedian, worstSample := 0.0, 0.0
	for _, name := range r.bench.order {
		if !strings.Contains(name, "/breakergen") {
			continue
		}
		paths = append(paths, name)
		var v []float64
		for _, s := range r.bench.samples[name] {
			v = append(v, s.allocs)
			worstSample = max(worstSample, s.allocs)
		}
		worstMedian = max(worstMedian, median(v))
	}
	var perRun []string
	worstPerRun := 0.0
	for _, sc := range benchScenarios {
		v, ok := r.behaviour["breakergen"]["allocs:"+sc.bench]
		if !ok {
			continue
		}
		perRun = append(perRun, sc.bench+" "+v)
		var f float64
		fmt.Sscan(v, &f)
		worstPerRun = max(worstPerRun, f)
	}
	at := target{name: "zero allocations on every breakergen path",
		measured: fmt.Sprintf("median allocs/op at most %g over %d breakergen benchmarks (4 scenarios × serial/RunParallel × 1/2 CPUs; largest single sample %g); testing.AllocsPerRun per call: %s",
			worstMedian, len(paths), worstSample, strings.Join(perRun, ", "))}
	switch {
	case len(paths) == 0 || len(perRun) == 0:
		at.verdict = "**not measured**"
	case worstMedian == 0 && worstPerRun == 0:
		at.verdict = "met"
	default:
		at.verdict = fmt.Sprintf("**missed**: %g allocs/op", max(worstMedian, worstPerRun))
	}
	ts = append(ts, at)

	for _, peer := range []struct {
		name   string
		strict bool
	}{{"mockgen", true}, {"mockery", false}} {
		var parts []string
		ok, worstRatio := true, 0.0
		for _, f := range r.gen.fixtures {
			bg, pm := r.gen.median(f.name, "breakergen"), r.gen.median(f.name, peer.name)
			if bg == 0 || pm == 0 {
				ok = false
				continue
			}
			x := float64(pm) / float64(bg) // >1: breakergen faster
			parts = append(parts, fmt.Sprintf("%s: breakergen %s, %s %s (%.2f×)", f.name, ms(bg), peer.name, ms(pm), x))
			if worstRatio == 0 || x < worstRatio {
				worstRatio = x
			}
			if peer.strict && !(x > 1) || !peer.strict && x < 1 {
				ok = false
			}
		}
		t := target{measured: strings.Join(parts, "; ")}
		if peer.strict {
			t.name = "breakergen's generator faster than mockgen"
		} else {
			t.name = "breakergen's generator no slower than mockery"
		}
		switch {
		case len(parts) == 0:
			t.verdict = "**not measured**"
		case ok:
			t.verdict = fmt.Sprintf("met: at least %.2f× faster (median, worst package)", worstRatio)
		default:
			t.verdict = fmt.Sprintf("**missed**: %.2f× slower on the worst package", 1/worstRatio)
		}
		ts = append(ts, t)
	}
	return ts
}

// scalingTarget: the RunParallel success benchmark at 2 CPUs takes at most
// want times its 1-CPU time (the success path scales across cores).
func (r report) scalingTarget(want float64) target {
	t := target{name: fmt.Sprintf("breakergen's RunParallel success at 2 CPUs at most %g× its 1-CPU time", want)}
	g1, _, ok1 := r.bench.median("BenchmarkSuccessParallel/breakergen", 1)
	g2, _, ok2 := r.bench.median("BenchmarkSuccessParallel/breakergen", 2)
	if !ok1 || !ok2 || g1.ns == 0 {
		t.measured, t.verdict = "no samples", "**not measured**"
		return t
	}
	x := g2.ns / g1.ns
	t.measured = fmt.Sprintf("**%.2f×** (%.3g ns/op at 2 CPUs, %.3g at 1)", x, g2.ns, g1.ns)
	if x <= want {
		t.verdict = "met"
	} else {
		t.verdict = fmt.Sprintf("**missed**: %.2f× against %g×", x, want)
	}
	return t
}
