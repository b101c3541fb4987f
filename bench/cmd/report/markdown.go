package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// report is everything one run measured.
type report struct {
	machine   machine
	opts      options
	bench     benchResults
	behaviour behaviour
	// tripQuality is the Markdown of package tripquality's tables.
	tripQuality string
	gen         genResults
	weight      weightResults
	took        time.Duration // the whole run
}

// contenders in the order of the tables; direct is the baseline.
var contenders = []struct{ name, what string }{
	{"direct", "the upstream called directly"},
	{"breakergen", "the generated `QuoterBreaker`, the plain wrapper"},
	{"breakergen-chain", "the generated `QuoterChain` with one fallback (success only): the chain whose primary answers"},
	{"gobreaker-execute", "sony/gobreaker/v2 `CircuitBreaker.Execute`"},
	{"gobreaker-twostep", "sony/gobreaker/v2 `TwoStepCircuitBreaker.Allow` + `done(err)`"},
	{"failsafe-executor", "failsafe-go `failsafe.With(cb).Get`"},
	{"failsafe-breaker", "failsafe-go bare breaker: `TryAcquirePermit`, `RecordSuccess`/`RecordError`"},
	{"resiliency", "eapache/go-resiliency `breaker.Run`"},
	{"hystrix", "afex/hystrix-go `hystrix.Do`"},
	{"forward", "not a breaker (success only): a wrapper that only forwards, i.e. the one extra dynamic call every contender pays"},
	{"floor", "not a breaker (success only): the generated wrapper's shape with its panic guard and no breaker (`bench/contend/floor.go`): the nil check, the error preset to the in-flight sentinel, and a deferred guard that recovers only if the method did not return (how a wrapper counts a panic as a failure)"},
}

// scenarios of the benchmark tables: the benchmark name and its baseline.
var benchScenarios = []struct{ bench, title, baseline, about string }{
	{"Success", "Success", "Success", "the upstream answers; the breaker is CLOSED"},
	{"Rejection", "Rejection while open", "Success", "the breaker is OPEN and rejects without calling the upstream; × direct compares with a direct successful call"},
	{"Failure", "Failure, never trips", "Failure", "the upstream fails every call; the threshold (1<<24) is never reached"},
	{"Limited", "Limiter plus breaker", "Success", "CLOSED breaker, then a token bucket whose token is always there: breakergen's own limiter (`ratelimit=1000000000/1000000` on `LimitedQuoter`), golang.org/x/time/rate `Limiter.Wait` for the peers; × direct compares with a direct successful call"},
}

func (r report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := r.machine
	p("# Benchmarks\n\n")
	p("<!-- Written by `cd bench && go run ./cmd/report` (make bench). Do not edit by hand: rerun it. -->\n\n")
	p("Every number and every cell below is the output of one run of `go run ./cmd/report` in `bench/`, ")
	p("which took %s (benchmarks %s, generators %s, compile weight %s).\n\n", roundDur(r.took), roundDur(r.bench.took), roundDur(r.gen.took), roundDur(r.weight.took))
	p("| machine | |\n| --- | --- |\n")
	p("| CPUs (nproc) | %d |\n| CPU model | %s |\n| Go | %s |\n| load average at start | %s |\n| load average at the end | %s |\n\n", m.cpus, m.model, m.goVer, m.loadavg, m.loadEnd)
	p("Reproduce: `make bench`, or `cd bench && go run ./cmd/report` (flags: `-rounds`, `-benchtime`, `-genruns`, `-compileruns`, `-gen DIR`, `-raw DIR` to keep the raw `go test -bench` output for benchstat).\n")
	p("This run: `go run ./cmd/report%s`.\n\n", strings.TrimRight(" "+strings.Join(r.opts.args, " "), " "))

	p("## Targets\n\n")
	p("SPEC §7's bounds, each a ratio of two rows measured in this run on this machine; the verdict is on the serial 1-CPU ratio.\n\n")
	p("| target | measured | verdict |\n| --- | --- | --- |\n")
	for _, t := range r.targets() {
		p("| %s | %s | %s |\n", t.name, t.measured, t.verdict)
	}
	p("\n")

	r.pathsTable(p)

	p("## One typed method through each breaker\n\n")
	p("`Quoter.Quote(ctx, code) (Quote, error)` is called directly and through each contender; every contender calls the same `quote.Upstream`, ")
	p("a `//go:noinline` method that returns a preallocated `Quote` and error. Contenders:\n\n")
	for _, c := range contenders {
		p("- **%s**: %s\n", c.name, c.what)
	}
	p("\nEach benchmark ran %d times (`-count %d` in %d interleaved rounds of `-count 1`, each round running every benchmark once, `-benchtime %s -cpu 1,2 -benchmem`); ",
		r.opts.rounds, r.opts.rounds, r.opts.rounds, r.opts.benchtime)
	p("the tables give medians. ns/op at 1 and 2 CPUs (`-cpu`); × direct and × breakergen divide the contender's ns/op by the baseline's at the same CPU count (1 CPU / 2 CPUs): ")
	p("× breakergen above 1 means breakergen is that many times faster. B/op and allocs/op are the medians at 1 CPU / 2 CPUs.\n\n")
	for _, sc := range benchScenarios {
		for _, par := range []bool{false, true} {
			name, base, mode := sc.bench, sc.baseline, "serial"
			if par {
				name, base, mode = name+"Parallel", base+"Parallel", "RunParallel"
			}
			p("### %s (%s)\n\n%s.\n\n", sc.title, mode, upperFirst(sc.about))
			p("| contender | ns/op 1 CPU | ns/op 2 CPUs | × direct | × breakergen | B/op | allocs/op |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
			for _, c := range contenders {
				s1, _, ok1 := r.bench.median("Benchmark"+name+"/"+c.name, 1)
				s2, _, ok2 := r.bench.median("Benchmark"+name+"/"+c.name, 2)
				if !ok1 && !ok2 {
					continue
				}
				d1, _, _ := r.bench.median("Benchmark"+base+"/direct", 1)
				d2, _, _ := r.bench.median("Benchmark"+base+"/direct", 2)
				g1, _, _ := r.bench.median("Benchmark"+name+"/breakergen", 1)
				g2, _, _ := r.bench.median("Benchmark"+name+"/breakergen", 2)
				p("| %s | %s | %s | %s / %s | %s / %s | %s / %s | %s / %s |\n", c.name,
					ns(s1.ns), ns(s2.ns),
					ratio(s1.ns, d1.ns), ratio(s2.ns, d2.ns),
					ratio(s1.ns, g1.ns), ratio(s2.ns, g2.ns),
					num(s1.bytes), num(s2.bytes), num(s1.allocs), num(s2.allocs))
			}
			p("\n")
		}
	}

	r.windowSection(p)
	r.hedgeSection(p)
	r.loadSection(p)
	r.keyedSection(p)

	p("## Behaviour\n\n")
	p("Each cell is recorded by a test in `bench/contend/behaviour_test.go` during this run. Breakers are configured to trip after one failure; ")
	p("all but hystrix run in a `testing/synctest` bubble (fake time; none of the peers has a clock seam, but all read the standard clock), ")
	p("hystrix with real 20 ms windows and bounded polls (its process-wide goroutines cannot live in a bubble).\n\n")
	p("- **half-open admits**: once the reset has passed, 100 callers arrive at once and each admitted probe hangs; how many reached the upstream.\n")
	p("- **cancellation is a failure**: the caller cancels its ctx while the call runs and the upstream returns `ctx.Err()`; is the next call rejected.\n")
	p("- **lost probe**: the one admitted probe hangs and never reports; is a call admitted again within ten resets (recovers), or never (stuck in HALF_OPEN).\n")
	p("- **panic frees its slot**: the probe panics (the caller recovers); is a call admitted again within ten resets. hystrix runs the call on a goroutine of its own, where the panic ends the process (tested in a child process).\n\n")
	p("| contender | half-open admits (of 100) | cancellation is a failure | lost probe | panic frees its slot |\n| --- | ---: | --- | --- | --- |\n")
	for _, c := range contenders[1:] {
		v, ok := r.behaviour[c.name]
		if !ok {
			continue
		}
		p("| %s | %s | %s | %s | %s |\n", c.name, cell(v, "halfopen"), cell(v, "cancel"), cell(v, "lostprobe"), cell(v, "panic"))
	}
	p("\n")

	r.tripQualitySection(p)
	r.generatorsSection(p)
	r.weightSection(p)
	return b.String()
}

// pathsTable is breakergen's own rows beside the direct call and the
// floor: every path SPEC §7 bounds, in every configuration.
func (r report) pathsTable(p func(string, ...any)) {
	rows := []struct {
		what string
		at   ref
	}{
		{"direct call", directSuccess},
		{"forward (one more dynamic call)", ref{"Success", "forward"}},
		{"floor (wrapper shape, panic guard, no breaker)", floorSuccess},
		{"wrapper, success", wrapperSuccess},
		{"chain, primary answers", chainSuccess},
		{"wrapper, failure (never trips)", ref{"Failure", "breakergen"}},
		{"wrapper, rejection (open)", ref{"Rejection", "breakergen"}},
	}
	p("## breakergen's paths\n\n")
	p("The generated wrapper and chain beside the direct call and the floor, from the benchmarks below (medians, ns/op); ")
	p("× floor and × direct divide by the floor's and the direct success call's ns/op in the same configuration. allocs/op is the largest median of the four configurations.\n\n")
	p("| path | serial 1 CPU | serial 2 CPUs | RunParallel 1 CPU | RunParallel 2 CPUs | × floor (serial 1 CPU / RunParallel 2 CPUs) | × direct (serial 1 CPU / RunParallel 2 CPUs) | allocs/op |\n")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, row := range rows {
		var cells []string
		allocs, ran := 0.0, false
		for _, cfg := range []struct {
			par  bool
			cpus int
		}{{false, 1}, {false, 2}, {true, 1}, {true, 2}} {
			name := "Benchmark" + row.at.sc
			if cfg.par {
				name += "Parallel"
			}
			s, _, ok := r.bench.median(name+"/"+row.at.who, cfg.cpus)
			if !ok {
				cells = append(cells, "–")
				continue
			}
			ran = true
			allocs = max(allocs, s.allocs)
			cells = append(cells, ns(s.ns))
		}
		if !ran {
			continue
		}
		f1, _ := r.ratioOf(row.at, floorSuccess, false, 1)
		f2, _ := r.ratioOf(row.at, floorSuccess, true, 2)
		d1, _ := r.ratioOf(row.at, directSuccess, false, 1)
		d2, _ := r.ratioOf(row.at, directSuccess, true, 2)
		p("| %s | %s | %s / %s | %s / %s | %g |\n", row.what, strings.Join(cells, " | "), times(f1), times(f2), times(d1), times(d2), allocs)
	}
	p("\n")
}

// costRow is one sub-benchmark of a cost section and what it times.
type costRow struct{ who, what string }

// windowRows are BenchmarkWindowSuccess{,Parallel}'s sub-benchmarks
// (bench/contend/window_bench_test.go); none is the baseline.
var windowRows = []costRow{
	{"none", "no window: the plain CLOSED path"},
	{"count", "a count window of 100 calls (`WindowCalls: 100`), clean: full of successes"},
	{"time", "a time window of a minute (`WindowPeriod: time.Minute`): a success counted on its P's counter, no lock or clock read"},
	{"slow", "the count window with `SlowCall: time.Second`: every call timed (two clock reads), clean"},
	{"slow-1m", "the time window with `SlowCall: time.Second`"},
	{"inflight", "`InFlight: time.Minute`, no window: every call timed"},
	{"clock2", "not a breaker: the plain wrapper plus the two clock reads a timed call needs, the floor of slow and inflight"},
}

// loadRows are BenchmarkLoad{,Parallel}'s sub-benchmarks
// (bench/contend/load_test.go); breakergen, the plain wrapper, is the
// baseline.
var loadRows = []costRow{
	{"breakergen", "the generated `QuoterBreaker`, the plain wrapper: no load control"},
	{"breakergen-concurrency", "the same with a bulkhead (`Concurrency: 1<<20`) that is never full"},
	{"breakergen-throttle", "the same with an adaptive throttle (`Throttle: 2`) whose upstream accepts every call"},
	{"breakergen-both", "the same with both"},
	{"failsafe-bulkhead", "failsafe-go's bulkhead bare: `AcquirePermit`, the call, deferred `ReleasePermit`"},
	{"failsafe-bulkhead-executor", "failsafe-go's bulkhead through `failsafe.With(bulkhead).Get`"},
	{"failsafe-throttler", "failsafe-go's adaptive throttler (its defaults) bare: `TryAcquirePermit`, the call, `RecordSuccess`/`RecordError`"},
	{"failsafe-throttler-executor", "failsafe-go's adaptive throttler through `failsafe.With(throttler).Get`"},
}

// windowSection: what a trip condition over a window costs a success
// (issue 14), if the run measured it.
func (r report) windowSection(p func(string, ...any)) {
	if !r.costRan("WindowSuccess", windowRows) {
		return
	}
	p("## Trip conditions over a window: cost\n\n")
	p("The generated wrapper's success path on a breaker with no window, a count window and a time window (SPEC §8), ")
	p("from `BenchmarkWindowSuccess` and `BenchmarkWindowSuccessParallel` in `bench/contend/window_bench_test.go`, in the same rounds as the tables above. ")
	p("The goal of issue 14: the count window at most 1.5× no window, and scaling at 2 CPUs; of issue 24: the time window at most 2× no window, slow and inflight at most 3×, each scaling at least 0.8 of no window's speedup.\n\n")
	r.costTargets(p, r.windowTargets())
	r.costTable(p, "WindowSuccess", windowRows, "no window")
}

// hedgeRows are BenchmarkHedgeSuccess{,Parallel}'s sub-benchmarks
// (bench/contend/hedge_bench_test.go); chain is the baseline.
var hedgeRows = []costRow{
	{"chain", "the generated chain (`QuoterChain`) whose primary answers: no hedge"},
	{"hedged", "the same chain with `hedge=1h` (`HedgedQuoterChain`), whose primary answers long before the delay"},
}

// hedgeSection: what hedging costs a chain call whose primary answers at
// once (issue 24), if the run measured it.
func (r report) hedgeSection(p func(string, ...any)) {
	if !r.costRan("HedgeSuccess", hedgeRows) {
		return
	}
	p("## Hedged chains: cost\n\n")
	p("The generated chain's call whose primary answers, without hedge and with a hedge delay the primary always beats (SPEC §9), ")
	p("from `BenchmarkHedgeSuccess` and `BenchmarkHedgeSuccessParallel` in `bench/contend/hedge_bench_test.go`, in the same rounds as the tables above. ")
	p("The goal of issue 24: under 300 ns and at most 2 allocations a call (it was 1.08 µs and 9).\n\n")
	r.costTargets(p, r.hedgeTargets())
	r.costTable(p, "HedgeSuccess", hedgeRows, "the chain without hedge")
}

// loadSection: what load control costs a healthy call (issue 15), beside
// failsafe-go's bulkhead and adaptive throttler, if the run measured it.
func (r report) loadSection(p func(string, ...any)) {
	if !r.costRan("Load", loadRows) {
		return
	}
	p("## Load control: cost\n\n")
	p("The generated wrapper's success path with a bulkhead that is never full and a throttle that never refuses (SPEC §9), ")
	p("beside failsafe-go's bulkhead and adaptive throttler on the same call, bare and through an executor, ")
	p("from `BenchmarkLoad` and `BenchmarkLoadParallel` in `bench/contend/load_test.go`, in the same rounds as the tables above. ")
	p("The goal of issue 15: concurrency at most 1.5× without it.\n\n")
	r.costTargets(p, r.loadTargets())
	r.costTable(p, "Load", loadRows, "the plain wrapper")
}

// keyedRows are BenchmarkKeyedSuccess{,Parallel}'s sub-benchmarks
// (bench/contend/keyed_bench_test.go); plain is the baseline.
var keyedRows = []costRow{
	{"plain", "the generated `QuoterBreaker`, one breaker, called with 10,000 codes in turn"},
	{"string", "one breaker per code (`key=code`), the 10,000 keys live, called in turn"},
	{"int", "one breaker per integer id, the 10,000 keys live, called in turn"},
	{"string-zipf", "the string row's wrapper and keys, called in a skewed order (Zipf, s = 1.1: the key of rank k in proportion to (1+k)^-1.1), as real traffic comes: a few keys take most calls"},
	{"int-zipf", "the int row's wrapper and keys, in the same skewed order"},
	{"string-uniform", "the string row's wrapper and keys, called in a random order, every key as likely as any other: the caches' worst case"},
	{"int-uniform", "the int row's wrapper and keys, in the same random order"},
}

// keyedSection: what a breaker per key costs a success (issue 30), if the
// run measured it.
func (r report) keyedSection(p func(string, ...any)) {
	if !r.costRan("KeyedSuccess", keyedRows) {
		return
	}
	p("## Breakers per key: cost\n\n")
	p("The success path of a method keyed by a string and by an integer with 10,000 live keys (SPEC §15), beside the plain wrapper called with the same keys, ")
	p("from `BenchmarkKeyedSuccess` and `BenchmarkKeyedSuccessParallel` in `bench/contend/keyed_bench_test.go` (the wrappers breakergen generates for `key=code` and `key=id`, `quote.KeyedQuoterBreaker` and `quote.IDQuoterBreaker`), in the same rounds as the tables above. ")
	p("The string and int rows cycle through the keys in the order they were made, every key as often as the others, so that each call reads the next key's cell in memory, which the CPU fetches ahead; the -zipf rows call the same keys in a skewed order, as real traffic comes; the -uniform rows call them in a random order, where nothing is fetched ahead: the caches' worst case (docs/keys.md, \"The order of the calls\"). ")
	p("Under RunParallel each goroutine starts at its own place; `BenchmarkKeyedHotKeyParallel`, when it ran, has every goroutine call one key of the 10,000 instead, beside the plain wrapper doing the same. ")
	p("The goals of issue 30: at most 3× the plain wrapper, 0 allocations, and a speedup from 1 CPU to 2 at least 0.8 of the plain wrapper's.\n\n")
	r.costTargets(p, r.keyedTargets())
	r.costTable(p, "KeyedSuccess", keyedRows, "the plain wrapper")
	r.keyedAlignedTable(p)
	r.keyedFloorTable(p)
}

// keyedAlignedTable: the keyed rows, serial on 1 CPU, from the default
// build (the targets' rows) and from the build linked with alignedFlag,
// each over its own build's plain row, when both ran.
func (r report) keyedAlignedTable(p func(string, ...any)) {
	a := r.bench.aligned
	if a == nil {
		return
	}
	if _, _, ok := a.median("BenchmarkKeyedSuccess/plain", 1); !ok {
		return
	}
	p("The same rows, serial on 1 CPU, from a second test binary of the same code linked with `%s` (every function at the start of a 64-byte line), in the same rounds. ", alignedFlag)
	p("How fast the keyed string path runs moves by up to a quarter with where the link puts its functions, from one build to the next, although the code did not change (docs/keys.md); aligned, it does not move, so this column is the one to compare across machines and commits. ")
	p("The targets above are the default build's, which is what users get.\n\n")
	p("| row | default build | `-funcalign=64` |\n| --- | ---: | ---: |\n")
	for _, row := range keyedRows {
		var cells []string
		for _, b := range []benchResults{r.bench, *a} {
			s, _, ok := b.median("BenchmarkKeyedSuccess/"+row.who, 1)
			base, _, _ := b.median("BenchmarkKeyedSuccess/plain", 1)
			if !ok || base.ns == 0 {
				cells = append(cells, "–")
				continue
			}
			cells = append(cells, fmt.Sprintf("%s (%s)", ns(s.ns), times(s.ns/base.ns)))
		}
		p("| %s | %s |\n", row.who, strings.Join(cells, " | "))
	}
	p("\n")
}

// keyedFloorRows are BenchmarkKeyedFloor's rows at 10,000 keys that
// keyedFloorTable shows.
var keyedFloorRows = []costRow{
	{"count=false", "a key's cell found through 4-byte slots, no count of calls in flight (nothing keeps a key with a call in flight)"},
	{"count=true", "the same, counting each call with atomic adds in the key's cell (a hot key called from several CPUs then moves its cell's line between them on every call)"},
	{"lanes", "the same, counting each call in its P's lane with plain writes, pinned to the P twice a call (a family's way until df56863)"},
	{"pinned-adds", "the same, pinned to the P once a call, with atomic adds on its lane (a family's way from df56863 until a call counted in its P's own word of the key's bucket: docs/keys.md, \"The count of calls in flight\")"},
	{"call-slots", "the same, each P writing its calls' cells into 64 slots of its own instead of a count per key (not in the family: see docs/keys.md, \"Slots of calls in flight\")"},
	{"lanes-family-slots", "the lanes row with a family's table: 16-byte slots, 32,768 of them (512 KiB)"},
	{"lanes-compact-slots", "the lanes row with 4-byte slots over dense 16-byte entries (128 + 160 KiB)"},
}

// keyedFloorTable: BenchmarkKeyedFloor's rows at 10,000 keys, serial on
// 1 CPU, over the plain wrapper's, when they ran.
func (r report) keyedFloorTable(p func(string, ...any)) {
	base, _, ok := r.bench.median("BenchmarkKeyedSuccess/plain", 1)
	if !ok || base.ns == 0 {
		return
	}
	if _, _, ok := r.bench.median("BenchmarkKeyedFloor/keys=10000/lanes", 1); !ok {
		return
	}
	p("How much of the 3× any keyed wrapper of this shape needs on this machine: `contend.KeyFloor` (`bench/contend/keyfloor.go`) is a keyed wrapper with nothing but the lookup of a key's cell and, in every row but the first, the count of calls in flight; it has no eviction, no integer table, no routes and no slow path. ")
	p("From `BenchmarkKeyedFloor` at 10,000 keys, called in the order they were made and in a random order (as the -uniform rows are), serial, 1 CPU, in the same rounds, each over the plain wrapper's row above:\n\n")
	for _, row := range keyedFloorRows {
		p("- **%s**: %s\n", row.who, row.what)
	}
	p("\n| row | in the keys' order | in a random order |\n| --- | ---: | ---: |\n")
	for _, row := range keyedFloorRows {
		var cells []string
		for _, at := range []string{"keys=10000/", "keys=10000/uniform/"} {
			if s, _, ok := r.bench.median("BenchmarkKeyedFloor/"+at+row.who, 1); ok {
				cells = append(cells, fmt.Sprintf("%s (%s)", ns(s.ns), times(s.ns/base.ns)))
			} else {
				cells = append(cells, "–")
			}
		}
		if cells[0] != "–" || cells[1] != "–" {
			p("| %s | %s |\n", row.who, strings.Join(cells, " | "))
		}
	}
	p("\n")
}

// costRan says whether any row of bench ran.
func (r report) costRan(bench string, rows []costRow) bool {
	for _, row := range rows {
		for _, name := range []string{"Benchmark" + bench, "Benchmark" + bench + "Parallel"} {
			for _, cpus := range []int{1, 2} {
				if _, _, ok := r.bench.median(name+"/"+row.who, cpus); ok {
					return true
				}
			}
		}
	}
	return false
}

func (r report) costTargets(p func(string, ...any), ts []target) {
	p("| target | measured | verdict |\n| --- | --- | --- |\n")
	for _, t := range ts {
		p("| %s | %s | %s |\n", t.name, t.measured, t.verdict)
	}
	p("\n")
}

// costTable is one row a sub-benchmark of bench: its median ns/op serial
// and RunParallel at 1 and 2 CPUs, each with its ratio to the first row's
// in the same configuration.
func (r report) costTable(p func(string, ...any), bench string, rows []costRow, baseWhat string) {
	p("Medians, ns/op; in brackets each row's ns/op over %s's (the first row) in the same configuration. B/op and allocs/op are the largest medians of the four configurations. Rows:\n\n", baseWhat)
	for _, row := range rows {
		p("- **%s**: %s\n", row.who, row.what)
	}
	p("\n| row | serial 1 CPU | serial 2 CPUs | RunParallel 1 CPU | RunParallel 2 CPUs | B/op | allocs/op |\n")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	base := rows[0].who
	for _, row := range rows {
		var cells []string
		bytes, allocs, ran := 0.0, 0.0, false
		for _, cfg := range []struct {
			par  bool
			cpus int
		}{{false, 1}, {false, 2}, {true, 1}, {true, 2}} {
			name := "Benchmark" + bench
			if cfg.par {
				name += "Parallel"
			}
			s, _, ok := r.bench.median(name+"/"+row.who, cfg.cpus)
			if !ok {
				cells = append(cells, "–")
				continue
			}
			ran = true
			bytes, allocs = max(bytes, s.bytes), max(allocs, s.allocs)
			x, _ := r.ratioOf(ref{bench, row.who}, ref{bench, base}, cfg.par, cfg.cpus)
			cells = append(cells, fmt.Sprintf("%s (%s)", ns(s.ns), times(x)))
		}
		if !ran {
			continue
		}
		p("| %s | %s | %g | %g |\n", row.who, strings.Join(cells, " | "), bytes, allocs)
	}
	p("\n")
}

// generatorsSection: every tool on every fixture, interleaved.
func (r report) generatorsSection(p func(string, ...any)) {
	p("## Generators\n\n")
	p("Whole-process wall time of each generator producing its output for the same interfaces, with warm build and module caches ")
	p("(one untimed round first), %d timed runs each, interleaved (breakergen, mockgen -source, mockgen package mode, mockery, breakergen, ...); ", r.opts.genruns)
	p("every binary was built once before timing, and every tool's output is removed before each run. How each tool runs:\n\n")
	for _, t := range r.gen.tools {
		p("- **%s** (%s): %s\n", t.name, t.version, t.about)
	}
	p("\nLines a method divides the lines written by the methods of the package's interfaces (skipped ones included: every tool writes them).\n\n")
	p("| package | tool | median | min | max | × breakergen | lines written | lines a method |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, f := range r.gen.fixtures {
		bg := r.gen.median(f.name, "breakergen")
		for _, t := range r.gen.tools {
			runs := r.gen.runs[f.name][t.name]
			if len(runs) == 0 {
				continue
			}
			lo, hi := slices.Min(runs), slices.Max(runs)
			md := r.gen.median(f.name, t.name)
			n := r.gen.lines[f.name][t.name]
			p("| %s | %s | %s | %s | %s | %s | %d | %.1f |\n", fixtureTitle(f), t.name, ms(md), ms(lo), ms(hi),
				ratio(float64(md), float64(bg)), n, float64(n)/float64(max(f.methods, 1)))
		}
	}
	p("\n")
	r.ordinarySection(p)
}

// weightSection: the package built with each tool's output.
func (r report) weightSection(p func(string, ...any)) {
	w := r.weight
	p("## Compile weight\n\n")
	p("The synth package (200 interfaces × 10 methods, 20 files) built alone, with breakergen's wrappers, and with mockgen's mocks of the same interfaces ")
	p("(package mode, written into the package). Each of %d interleaved rounds builds each copy once with `go build ./DIR` after writing a file with a fresh constant into it, ", r.opts.compileruns)
	p("so that this package, and only it, misses the build cache; the standard library, the breakergen runtime and gomock stay cached from an untimed build. ")
	p("Wall time is the whole `go build`; peak RSS is the rusage maximum of the go command and the compiler it waited for (`ru_maxrss`).\n\n")
	p("| package built | generated lines | lines a method | go build median | min | max | × mockgen | peak RSS (median) |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	mt, _ := w.median("mockgen")
	for _, v := range weightVariants {
		if len(w.runs[v]) == 0 {
			continue
		}
		t, rss := w.median(v)
		lo, hi := w.spread(v)
		what := map[string]string{"sources": "sources alone", "breakergen": "with breakergen's wrappers", "mockgen": "with mockgen's mocks"}[v]
		lines, per := "–", "–"
		if v != "sources" {
			lines, per = fmt.Sprint(w.lines[v]), fmt.Sprintf("%.1f", w.perMethod(v))
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", what, lines, per, secs(t), secs(lo), secs(hi), ratio(float64(t), float64(mt)), mib(rss))
	}
	p("\n")
}

func fixtureTitle(f fixture) string {
	switch f.name {
	case "synth":
		return "synth (200 interfaces × 10 methods, 20 files)"
	case "synthone":
		return "synthone (the same, one file)"
	}
	return fmt.Sprintf("httpgen (%d interfaces: net/http, generics)", len(f.interfaces))
}

func cell(v map[string]string, k string) string {
	if s, ok := v[k]; ok {
		return s
	}
	return "not recorded"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func ns(v float64) string {
	switch {
	case v == 0:
		return "–"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func num(v float64) string { return fmt.Sprintf("%g", v) }

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "–"
	}
	r := a / b
	if r < 10 {
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// mib formats KiB as MiB.
func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func roundDur(d time.Duration) string { return d.Round(time.Second).String() }
