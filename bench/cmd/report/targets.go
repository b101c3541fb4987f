package main

import (
	"fmt"
	"strings"
)

// target is one goal of SPEC §7 and what this run says about it.
type target struct {
	name, measured, verdict string
}

// ref names one benchmark row: a scenario ("Success") and a contender.
type ref struct{ sc, who string }

// ratioOf returns a's ns/op over b's, both serial or both RunParallel, at
// cpus, and whether both ran.
func (r report) ratioOf(a, b ref, parallel bool, cpus int) (float64, bool) {
	suffix := ""
	if parallel {
		suffix = "Parallel"
	}
	x, _, ok1 := r.bench.median("Benchmark"+a.sc+suffix+"/"+a.who, cpus)
	y, _, ok2 := r.bench.median("Benchmark"+b.sc+suffix+"/"+b.who, cpus)
	if !ok1 || !ok2 || y.ns == 0 {
		return 0, false
	}
	return x.ns / y.ns, true
}

// bound is a target on a ratio of two rows measured in the same run: a's
// ns/op over b's at most (or at least) want. The verdict is on the serial
// 1-CPU ratio; the other three configurations are listed beside it.
type bound struct {
	name   string
	a, b   ref
	want   float64
	atMost bool
	note   string
}

func (r report) boundTarget(bd bound) target {
	t := target{name: bd.name}
	head, ok := r.ratioOf(bd.a, bd.b, false, 1)
	if !ok {
		t.measured, t.verdict = "no samples", "**not measured**"
		return t
	}
	s2, _ := r.ratioOf(bd.a, bd.b, false, 2)
	p1, _ := r.ratioOf(bd.a, bd.b, true, 1)
	p2, _ := r.ratioOf(bd.a, bd.b, true, 2)
	t.measured = fmt.Sprintf("**%.2f×** (serial, 1 CPU); serial 2 CPUs %s, RunParallel 1 CPU %s, 2 CPUs %s",
		head, times(s2), times(p1), times(p2))
	if bd.note != "" {
		t.measured += ". " + bd.note
	}
	t.verdict = verdict(head, bd.want, bd.atMost)
	return t
}

// verdict says whether x meets the bound want: at most want, or at least.
func verdict(x, want float64, atMost bool) string {
	switch {
	case atMost && x <= want:
		return fmt.Sprintf("met, %.2f× under the limit", want/x)
	case atMost:
		return fmt.Sprintf("**missed**: %.2f× over (%.1f%% above the limit)", x/want, 100*(x/want-1))
	case x >= want:
		return fmt.Sprintf("met, %.2f× above the target", x/want)
	}
	return fmt.Sprintf("**missed**: %.2f× short (%.1f%% of the target)", want/x, 100*x/want)
}

func times(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x)
}

var (
	wrapperSuccess = ref{"Success", "breakergen"}
	chainSuccess   = ref{"Success", "breakergen-chain"}
	floorSuccess   = ref{"Success", "floor"}
	directSuccess  = ref{"Success", "direct"}
)

func (r report) targets() []target {
	var ceiling = func(peer, label string) string {
		if x, ok := r.ratioOf(ref{"Success", peer}, floorSuccess, false, 1); ok {
			return fmt.Sprintf("Ceiling: the floor is %.2f× faster than %s", x, label)
		}
		return ""
	}
	var floorNote string
	if x, ok := r.ratioOf(floorSuccess, directSuccess, false, 1); ok {
		floorNote = fmt.Sprintf("The floor (the generated wrapper's shape with its panic guard and no breaker) is %.2f× the direct call", x)
	}
	ts := []target{
		r.boundTarget(bound{name: "success path at most 1.25× the floor", a: wrapperSuccess, b: floorSuccess, want: 1.25, atMost: true, note: floorNote}),
		r.boundTarget(bound{name: "success path at least 20× faster than gobreaker's `Execute`",
			a: ref{"Success", "gobreaker-execute"}, b: wrapperSuccess, want: 20, note: ceiling("gobreaker-execute", "gobreaker's Execute")}),
		r.resiliencyTarget(),
		r.boundTarget(bound{name: "failing call at most 0.5× gobreaker's failing `Execute`",
			a: ref{"Failure", "breakergen"}, b: ref{"Failure", "gobreaker-execute"}, want: 0.5, atMost: true,
			note: "Each failure reads the clock once, for the exact last-failure time SPEC §4 asks for"}),
		r.boundTarget(bound{name: "failing call no more than go-resiliency's failing `Run`",
			a: ref{"Failure", "breakergen"}, b: ref{"Failure", "resiliency"}, want: 1, atMost: true}),
		r.boundTarget(bound{name: "rejection at most 3× a direct call",
			a: ref{"Rejection", "breakergen"}, b: directSuccess, want: 3, atMost: true}),
		r.boundTarget(bound{name: "chain whose primary answers at most 2× the plain wrapper",
			a: chainSuccess, b: wrapperSuccess, want: 2, atMost: true}),
		r.allocTarget(),
	}
	return append(ts, r.weightTargets()...)
}

// resiliencyTarget: SPEC §7's success target against go-resiliency's Run,
// whose fast path costs about what the floor does: the wrapper is faster
// than Run by at least 0.9 of the floor's own margin over Run, both
// measured in this run (serial, 1 CPU), so the floor bounds it.
func (r report) resiliencyTarget() target {
	const share = 0.9
	peer := ref{"Success", "resiliency"}
	const name = "success path faster than go-resiliency's `Run` by at least 0.9 of the floor's margin over it"
	margin, ok := r.ratioOf(peer, floorSuccess, false, 1)
	if !ok {
		return target{name: name, measured: "no samples", verdict: "**not measured**"}
	}
	want := share * margin
	return r.boundTarget(bound{name: name, a: peer, b: wrapperSuccess, want: want,
		note: fmt.Sprintf("Ceiling: the floor is %.2f× faster than go-resiliency's Run, so the target is 0.9 × %.2f× = %.2f×", margin, margin, want)})
}

// allocTarget: the median allocs/op of every breakergen benchmark (the
// wrapper and the chain), and testing.AllocsPerRun of one call on each path
// (the allocation tests).
func (r report) allocTarget() target {
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
	for _, p := range []string{"Success", "Rejection", "Failure", "Limited", "Chain"} {
		v, ok := r.behaviour["breakergen"]["allocs:"+p]
		if !ok {
			continue
		}
		perRun = append(perRun, p+" "+v)
		var f float64
		fmt.Sscan(v, &f)
		worstPerRun = max(worstPerRun, f)
	}
	t := target{name: "0 allocations on every path above",
		measured: fmt.Sprintf("median allocs/op at most %g over %d benchmarks of the wrapper and the chain (serial and RunParallel, 1 and 2 CPUs; largest single sample %g); testing.AllocsPerRun per call: %s",
			worstMedian, len(paths), worstSample, strings.Join(perRun, ", "))}
	switch {
	case len(paths) == 0 || len(perRun) == 0:
		t.verdict = "**not measured**"
	case worstMedian == 0 && worstPerRun == 0:
		t.verdict = "met"
	default:
		t.verdict = fmt.Sprintf("**missed**: %g allocs/op", max(worstMedian, worstPerRun))
	}
	return t
}

// weightTargets: the generated contract against mockgen on 200 × 10 (lines
// a method, the package's build) and the generator against mockgen's
// source mode.
func (r report) weightTargets() []target {
	w := r.weight
	lines := target{name: "generated lines a method no more than mockgen's (200 × 10)"}
	bl, ml := w.perMethod("breakergen"), w.perMethod("mockgen")
	if bl == 0 || ml == 0 {
		lines.measured, lines.verdict = "no samples", "**not measured**"
	} else {
		lines.measured = fmt.Sprintf("**%.1f** lines a method (%d lines) against mockgen's %.1f (%d lines): %.2f×",
			bl, w.lines["breakergen"], ml, w.lines["mockgen"], bl/ml)
		lines.verdict = verdict(bl/ml, 1, true)
	}

	build := target{name: "the package compiles no slower than with mockgen's mocks (200 × 10)"}
	bt, brss := w.median("breakergen")
	mt, mrss := w.median("mockgen")
	st, _ := w.median("sources")
	if bt == 0 || mt == 0 {
		build.measured, build.verdict = "no samples", "**not measured**"
	} else {
		build.measured = fmt.Sprintf("`go build`, this package's cache entry missed: **%s** and %s peak RSS with breakergen's wrappers, %s and %s with mockgen's mocks (%.2f×); %s for the sources alone",
			secs(bt), mib(brss), secs(mt), mib(mrss), float64(bt)/float64(mt), secs(st))
		build.verdict = verdict(float64(bt)/float64(mt), 1, true)
	}

	return append([]target{lines, build}, r.generatorTargets()...)
}

// generatorTargets: the generator against mockgen's source mode on the
// 200 × 10 interfaces, in every layout and package timed, and issue 23's
// half of it on synthone.
func (r report) generatorTargets() []target {
	gen := target{name: "generator faster than mockgen in source mode (200 × 10, warm, whole process)"}
	var parts []string
	worst := 0.0
	for _, f := range r.gen.fixtures {
		if !strings.HasPrefix(f.name, "synth") {
			continue
		}
		bg, src := r.gen.median(f.name, "breakergen"), r.gen.median(f.name, "mockgen-source")
		if bg == 0 || src == 0 {
			continue
		}
		x := float64(src) / float64(bg) // > 1: breakergen faster
		parts = append(parts, fmt.Sprintf("%s: breakergen %s, mockgen -source %s (%.2f×)", fixtureTitle(f), ms(bg), ms(src), x))
		if worst == 0 || x < worst {
			worst = x
		}
	}
	for _, l := range r.gen.ordinary.layouts {
		bg, src := l.median("breakergen"), l.median("mockgen-source")
		if bg == 0 || src == 0 {
			continue
		}
		x := float64(src) / float64(bg)
		parts = append(parts, fmt.Sprintf("%s in an ordinary package (its mocks beside it): breakergen %s, mockgen -source %s (%.2f×)",
			"synth"+strings.TrimPrefix(l.fixture.name, "ordinary"), ms(bg), ms(src), x))
		if worst == 0 || x < worst {
			worst = x
		}
	}
	if len(parts) == 0 {
		gen.measured, gen.verdict = "no samples", "**not measured**"
	} else {
		gen.measured = strings.Join(parts, "; ")
		if worst > 1 {
			gen.verdict = fmt.Sprintf("met: %.2f× faster on the worse layout", worst)
		} else {
			gen.verdict = fmt.Sprintf("**missed**: %.2f× slower on the worse layout", 1/worst)
		}
	}
	return []target{gen, r.halfTarget()}
}

// halfTarget: issue 23's goal on synthone, the 200 × 10 interfaces in one
// file, where one mockgen -source process reads them all: breakergen at
// most half of it.
func (r report) halfTarget() target {
	t := target{name: "generator at most 0.5× mockgen in source mode on synthone (200 × 10 in one file; issue 23)"}
	bg, src := r.gen.median("synthone", "breakergen"), r.gen.median("synthone", "mockgen-source")
	if bg == 0 || src == 0 {
		t.measured, t.verdict = "no samples", "**not measured**"
		return t
	}
	x := float64(bg) / float64(src)
	t.measured = fmt.Sprintf("breakergen **%s**, mockgen -source %s: **%.2f×**", ms(bg), ms(src), x)
	if l, ok := r.gen.ordinary.layout("ordinaryone"); ok && l.median("breakergen") > 0 && l.median("mockgen-source") > 0 {
		t.measured += fmt.Sprintf("; in an ordinary package, its mocks beside it, %s against %s (%.2f×)",
			ms(l.median("breakergen")), ms(l.median("mockgen-source")), float64(l.median("breakergen"))/float64(l.median("mockgen-source")))
	}
	t.verdict = verdict(x, 0.5, true)
	return t
}

// Issue 14's and issue 15's goals on the cost of a window and of load
// control, each a ratio of rows of BenchmarkWindowSuccess or BenchmarkLoad
// measured in this run. They are stated in their own sections, not in the
// Targets table of SPEC §7.
var (
	windowNone       = ref{"WindowSuccess", "none"}
	windowCount      = ref{"WindowSuccess", "count"}
	windowTime       = ref{"WindowSuccess", "time"}
	windowSlow       = ref{"WindowSuccess", "slow"}
	windowInFlight   = ref{"WindowSuccess", "inflight"}
	windowClock2     = ref{"WindowSuccess", "clock2"}
	loadPlain        = ref{"Load", "breakergen"}
	loadConcurrency  = ref{"Load", "breakergen-concurrency"}
	loadThrottle     = ref{"Load", "breakergen-throttle"}
	failsafeBulkhead = ref{"Load", "failsafe-bulkhead"}
	failsafeThrottle = ref{"Load", "failsafe-throttler"}
)

// windowTargets: the count window at most 1.5× no window (issue 14),
// whether each window scales from 1 CPU to 2 beside no window, and issue
// 24's goals for the time window (at most 2× no window) and for slow and
// inflight (at most 3×, and, since two clock reads alone cost more than
// that on a virtual machine, within 1.25× of clock2, their floor), each
// scaling at least 0.8 of no window's speedup.
func (r report) windowTargets() []target {
	ts := []target{r.boundTarget(bound{name: "count window at most 1.5× no window",
		a: windowCount, b: windowNone, want: 1.5, atMost: true,
		note: "A clean count window (full of successes) takes the plain CLOSED path"})}
	for _, w := range []struct {
		what string
		at   ref
	}{{"count window", windowCount}, {"time window", windowTime}} {
		ts = append(ts, r.scaleTarget(w.what+" scales (RunParallel, 2 CPUs against 1)", w.at, windowNone, "no window"))
	}
	ts = append(ts, r.boundTarget(bound{name: "time window at most 2× no window (issue 24)",
		a: windowTime, b: windowNone, want: 2, atMost: true,
		note: "A success in a time window adds one to its P's counter of the published bucket: no lock, no clock read"}))
	ts = append(ts, r.relScaleTarget("time window scales at least 0.8 of no window's speedup (issue 24)", windowTime, windowNone, 0.8))
	for _, w := range []struct {
		what string
		at   ref
	}{{"slow", windowSlow}, {"inflight", windowInFlight}} {
		t := r.boundTarget(bound{name: w.what + " at most 3× no window (issue 24); within 1.25× of clock2, its floor",
			a: w.at, b: windowNone, want: 3, atMost: true,
			note: "Two clock reads a call (see the clock2 row, their floor), no lock that all calls share"})
		t.verdict += r.floorVerdict(w.at, windowClock2, 1.25)
		ts = append(ts, t)
		ts = append(ts, r.relScaleTarget(w.what+" scales at least 0.8 of no window's speedup (issue 24)", w.at, windowNone, 0.8))
	}
	return ts
}

// floorVerdict is the second half of a verdict whose first half is
// against no window: a's ratio to floor (serial, 1 CPU), a row that
// bounds it from below on the machine (clock2: the two clock reads of a
// timed call), against the goal of at most want; "" when not measured.
func (r report) floorVerdict(a, floor ref, want float64) string {
	x, ok := r.ratioOf(a, floor, false, 1)
	if !ok {
		return ""
	}
	return fmt.Sprintf("; against clock2, the floor: **%.2f×**, %s", x, verdict(x, want, true))
}

// relScaleTarget: a's speedup from 1 CPU to 2 (RunParallel) is at least
// want of base's, measured in this run.
func (r report) relScaleTarget(name string, a, base ref, want float64) target {
	t := target{name: name}
	x, ok1 := r.speedup(a)
	y, ok2 := r.speedup(base)
	if !ok1 || !ok2 || y == 0 {
		t.measured, t.verdict = "no samples", "**not measured**"
		return t
	}
	t.measured = fmt.Sprintf("**%.2f** of its speedup: %.2f× the calls a second at 2 CPUs as at 1, beside %.2f×", x/y, x, y)
	t.verdict = verdict(x/y, want, false)
	return t
}

// speedup is a's RunParallel ns/op at 1 CPU over its ns/op at 2 CPUs: how
// many times the calls a second that two CPUs make over one (2 is perfect
// scaling, 1 none), and whether both ran.
func (r report) speedup(a ref) (float64, bool) {
	x, _, ok1 := r.bench.median("Benchmark"+a.sc+"Parallel/"+a.who, 1)
	y, _, ok2 := r.bench.median("Benchmark"+a.sc+"Parallel/"+a.who, 2)
	if !ok1 || !ok2 || x.ns == 0 || y.ns == 0 {
		return 0, false
	}
	return x.ns / y.ns, true
}

// scaleTarget: a scales if two CPUs make more of its calls a second than
// one; base's speedup is given beside it.
func (r report) scaleTarget(name string, a, base ref, baseWhat string) target {
	t := target{name: name}
	x, ok := r.speedup(a)
	if !ok {
		t.measured, t.verdict = "no samples", "**not measured**"
		return t
	}
	y, _ := r.speedup(base)
	t.measured = fmt.Sprintf("**%.2f×** the calls a second at 2 CPUs as at 1 (RunParallel ns/op 1 CPU over 2 CPUs); %s %s", x, baseWhat, times(y))
	if y > 0 {
		t.measured += fmt.Sprintf(" (%.0f%% of its speedup)", 100*x/y)
	}
	if x > 1 {
		t.verdict = fmt.Sprintf("met, scales %.2f×", x)
	} else {
		t.verdict = fmt.Sprintf("**missed**: %.2f× at 2 CPUs", x)
	}
	return t
}

// hedgeTargets: issue 24's bounds on a hedged chain call whose primary
// answers before the delay, in ns/op and allocs/op of the serial 1-CPU
// median.
func (r report) hedgeTargets() []target {
	ns := target{name: "hedged chain, primary answers: under 300 ns (issue 24)"}
	allocs := target{name: "hedged chain, primary answers: at most 2 allocations (issue 24)"}
	s, _, ok := r.bench.median("BenchmarkHedgeSuccess/hedged", 1)
	if !ok {
		ns.measured, ns.verdict = "no samples", "**not measured**"
		allocs.measured, allocs.verdict = ns.measured, ns.verdict
		return []target{ns, allocs}
	}
	ns.measured = fmt.Sprintf("**%.0f ns** (serial, 1 CPU, median)", s.ns)
	if c, _, ok := r.bench.median("BenchmarkHedgeSuccess/chain", 1); ok && c.ns > 0 {
		ns.measured += fmt.Sprintf("; %.2f× the chain without hedge", s.ns/c.ns)
	}
	ns.verdict = verdict(s.ns, 300, true)
	allocs.measured = fmt.Sprintf("**%.0f** allocs/op (serial, 1 CPU, median); the primary's ctx, new for each call because the primary may keep it, is one", s.allocs)
	if s.allocs <= 2 {
		allocs.verdict = "met"
	} else {
		allocs.verdict = fmt.Sprintf("**missed**: %.0f", s.allocs)
	}
	return []target{ns, allocs}
}

// loadTargets: a bulkhead at most 1.5× the plain wrapper (issue 15), and
// breakergen's bulkhead and throttle against failsafe-go's.
func (r report) loadTargets() []target {
	return []target{
		r.boundTarget(bound{name: "concurrency at most 1.5× without it",
			a: loadConcurrency, b: loadPlain, want: 1.5, atMost: true,
			note: "The floor of a bulkhead is two writes a call to one shared atomic word (the slot taken and freed), on top of the plain wrapper's own"}),
		r.fasterTarget("bulkhead faster than failsafe-go's bulkhead", loadConcurrency, failsafeBulkhead),
		r.fasterTarget("throttle faster than failsafe-go's adaptive throttler", loadThrottle, failsafeThrottle),
	}
}

// fasterTarget: theirs' ns/op over ours', bare and through
// failsafe.With(...).Get (theirs.who + "-executor"); the verdict is on the
// serial 1-CPU ratio against the bare policy.
func (r report) fasterTarget(name string, ours, theirs ref) target {
	t := target{name: name}
	exec := ref{theirs.sc, theirs.who + "-executor"}
	head, ok := r.ratioOf(theirs, ours, false, 1)
	if !ok {
		t.measured, t.verdict = "no samples", "**not measured**"
		return t
	}
	var parts []string
	for _, c := range []struct {
		what     string
		parallel bool
		cpus     int
	}{{"serial 1 CPU", false, 1}, {"serial 2 CPUs", false, 2}, {"RunParallel 1 CPU", true, 1}, {"RunParallel 2 CPUs", true, 2}} {
		bare, _ := r.ratioOf(theirs, ours, c.parallel, c.cpus)
		ex, _ := r.ratioOf(exec, ours, c.parallel, c.cpus)
		parts = append(parts, fmt.Sprintf("%s %s / %s", c.what, times(bare), times(ex)))
	}
	lead := fmt.Sprintf("**%.2f× faster**", head)
	if head < 1 {
		lead = fmt.Sprintf("**%.2f× slower**", 1/head)
	}
	t.measured = fmt.Sprintf("`%s` %s than `%s` (serial, 1 CPU); × faster (their ns/op over ours) than the bare policy / through `failsafe.With(...).Get`: %s",
		ours.who, lead, theirs.who, strings.Join(parts, ", "))
	if head > 1 {
		t.verdict = fmt.Sprintf("met, %.2f× faster", head)
	} else {
		t.verdict = fmt.Sprintf("**missed**: %.2f× slower", 1/head)
	}
	return t
}

// Issue 30's goals on the cost of breakers per key, ratios of rows of
// BenchmarkKeyedSuccess measured in this run.
var (
	keyedPlain      = ref{"KeyedSuccess", "plain"}
	keyedString     = ref{"KeyedSuccess", "string"}
	keyedInt        = ref{"KeyedSuccess", "int"}
	keyedStringZipf = ref{"KeyedSuccess", "string-zipf"}
	keyedIntZipf    = ref{"KeyedSuccess", "int-zipf"}
	keyedStringUni  = ref{"KeyedSuccess", "string-uniform"}
	keyedIntUni     = ref{"KeyedSuccess", "int-uniform"}
	// BenchmarkKeyedHotKeyParallel: every goroutine on one key.
	keyedHotPlain  = ref{"KeyedHotKey", "plain"}
	keyedHotString = ref{"KeyedHotKey", "string"}
	keyedHotInt    = ref{"KeyedHotKey", "int"}
)

// keyedTargets: each keyed row at most 3× the plain wrapper with 10,000
// live keys, its RunParallel speedup at least 0.8 of the plain wrapper's,
// and no allocation on any keyed row.
func (r report) keyedTargets() []target {
	var ts []target
	for _, k := range []struct {
		what string
		at   ref
	}{{"string key", keyedString}, {"integer key", keyedInt}} {
		ts = append(ts, r.boundTarget(bound{name: k.what + ": success path at most 3× the plain wrapper, 10,000 live keys (issue 30)",
			a: k.at, b: keyedPlain, want: 3, atMost: true}))
		ts = append(ts, r.relScaleTarget(k.what+": scales at least 0.8 of the plain wrapper's speedup (issue 30)", k.at, keyedPlain, 0.8))
	}
	// The same bound under skewed traffic, the ordinary case, and under
	// traffic in a random order, the caches' worst case; a row an older
	// run did not measure is left out.
	for _, k := range []struct {
		what string
		at   ref
	}{
		{"string key, skewed traffic (Zipf)", keyedStringZipf}, {"integer key, skewed traffic (Zipf)", keyedIntZipf},
		{"string key, keys in a random order", keyedStringUni}, {"integer key, keys in a random order", keyedIntUni},
	} {
		if _, _, ok := r.bench.median("Benchmark"+k.at.sc+"/"+k.at.who, 1); ok {
			ts = append(ts, r.boundTarget(bound{name: k.what + ": success path at most 3× the plain wrapper, 10,000 live keys",
				a: k.at, b: keyedPlain, want: 3, atMost: true}))
		}
	}
	// One hot key called from every CPU, the case a count of calls in
	// flight in the key's own line would not scale; a run without it
	// leaves it out.
	for _, k := range []struct {
		what string
		at   ref
	}{{"string key", keyedHotString}, {"integer key", keyedHotInt}} {
		if _, ok := r.speedup(k.at); ok {
			ts = append(ts, r.relScaleTarget(k.what+", one hot key called from every CPU: scales at least 0.8 of the plain wrapper's speedup", k.at, keyedHotPlain, 0.8))
		}
	}
	allocs := target{name: "keyed success path: 0 allocations (issue 30)"}
	worst, n := 0.0, 0
	for _, name := range r.bench.order {
		if !strings.HasPrefix(name, "BenchmarkKeyedSuccess") || strings.Contains(name, "/plain") {
			continue
		}
		n++
		var v []float64
		for _, s := range r.bench.samples[name] {
			v = append(v, s.allocs)
		}
		worst = max(worst, median(v))
	}
	switch {
	case n == 0:
		allocs.measured, allocs.verdict = "no samples", "**not measured**"
	case worst == 0:
		allocs.measured, allocs.verdict = fmt.Sprintf("median allocs/op 0 over %d benchmarks (string and integer, serial and RunParallel, 1 and 2 CPUs)", n), "met"
	default:
		allocs.measured = fmt.Sprintf("median allocs/op at most %g over %d benchmarks", worst, n)
		allocs.verdict = fmt.Sprintf("**missed**: %g allocs/op", worst)
	}
	return append(ts, allocs)
}
