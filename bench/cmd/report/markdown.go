package main

import (
	"fmt"
	"strings"
	"time"
)

// report is everything one run measured.
type report struct {
	machine   machine
	opts      options
	bench     benchResults
	behaviour behaviour
	gen       genResults
	took      time.Duration // the whole run
}

// contenders in the order of the tables; direct is the baseline.
var contenders = []struct{ name, what string }{
	{"direct", "the upstream called directly"},
	{"breakergen", "the generated `QuoterBreaker` (runtime `Route.EnterFast` or `Route.Enter`, then `Call.Exit`)"},
	{"gobreaker-execute", "sony/gobreaker/v2 `CircuitBreaker.Execute`"},
	{"gobreaker-twostep", "sony/gobreaker/v2 `TwoStepCircuitBreaker.Allow` + `done(err)`"},
	{"failsafe-executor", "failsafe-go `failsafe.With(cb).Get`"},
	{"failsafe-breaker", "failsafe-go bare breaker: `TryAcquirePermit`, `RecordSuccess`/`RecordError`"},
	{"resiliency", "eapache/go-resiliency `breaker.Run`"},
	{"hystrix", "afex/hystrix-go `hystrix.Do`"},
	{"floor-forward", "not a breaker (success only): a wrapper that only forwards, i.e. the one extra dynamic call every contender pays"},
	{"floor-defer", "not a breaker (success only): the generated wrapper's shape without the runtime, forwarding with the error preset and a deferred function that recovers only if the method did not return (how a wrapper counts panics)"},
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
	p("which took %s (benchmarks %s, generators %s).\n\n", roundDur(r.took), roundDur(r.bench.took), roundDur(r.gen.took))
	p("| machine | |\n| --- | --- |\n")
	p("| CPUs (nproc) | %d |\n| CPU model | %s |\n| Go | %s |\n| load average at start | %s |\n\n", m.cpus, m.model, m.goVer, m.loadavg)
	p("Reproduce: `make bench`, or `cd bench && go run ./cmd/report` (flags: `-rounds`, `-benchtime`, `-genruns`, `-gen DIR`, `-raw DIR` to keep the raw `go test -bench` output for benchstat).\n")
	p("This run: `go run ./cmd/report%s`.\n\n", strings.TrimRight(" "+strings.Join(r.opts.args, " "), " "))

	p("## Targets\n\n| target | measured | verdict |\n| --- | --- | --- |\n")
	for _, t := range r.targets() {
		p("| %s | %s | %s |\n", t.name, t.measured, t.verdict)
	}
	p("\n")

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

	p("## Behaviour\n\n")
	p("Each cell is recorded by a test in `bench/contend/behaviour_test.go` during this run. Breakers are configured to trip after one failure; ")
	p("all but hystrix run in a `testing/synctest` bubble (fake time; none of the peers has a clock seam, but all read the standard clock), ")
	p("hystrix with real 20 ms windows and bounded polls (its process-wide goroutines cannot live in a bubble).\n\n")
	p("- **half-open admits**: once the open window has passed, 100 callers arrive at once and each admitted probe hangs; how many reached the upstream.\n")
	p("- **cancellation is a failure**: the caller cancels its ctx while the call runs and the upstream returns `ctx.Err()`; is the next call rejected.\n")
	p("- **lost probe**: the one admitted probe hangs and never reports; is a call admitted again within ten open windows (recovers), or never (stuck in HALF_OPEN).\n")
	p("- **panic frees its slot**: the probe panics (the caller recovers); is a call admitted again within ten open windows. hystrix runs the call on a goroutine of its own, where the panic ends the process (tested in a child process).\n\n")
	p("| contender | half-open admits (of 100) | cancellation is a failure | lost probe | panic frees its slot |\n| --- | ---: | --- | --- | --- |\n")
	for _, c := range contenders[1:] {
		v, ok := r.behaviour[c.name]
		if !ok {
			continue
		}
		p("| %s | %s | %s | %s | %s |\n", c.name, cell(v, "halfopen"), cell(v, "cancel"), cell(v, "lostprobe"), cell(v, "panic"))
	}
	p("\n")

	p("## Generators\n\n")
	p("Whole-process wall time of each generator producing its output for the same interfaces, with warm build and module caches ")
	p("(one untimed round first), %d timed runs each, interleaved (breakergen, mockgen, mockery, breakergen, ...); every binary was built once before timing, ", r.opts.genruns)
	p("and every tool's output is removed before each run. mockgen runs in package mode naming every interface; mockery with the configuration `mockery init` writes and `all: true`.\n\n")
	p("| tool | version |\n| --- | --- |\n")
	for _, t := range r.gen.tools {
		p("| %s | %s |\n", t.name, t.version)
	}
	p("\n| package | tool | median | min | max | × breakergen | lines written |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, f := range r.gen.fixtures {
		bg := r.gen.median(f.name, "breakergen")
		for _, t := range r.gen.tools {
			runs := r.gen.runs[f.name][t.name]
			lo, hi := runs[0], runs[0]
			for _, d := range runs {
				lo, hi = min(lo, d), max(hi, d)
			}
			md := r.gen.median(f.name, t.name)
			p("| %s | %s | %s | %s | %s | %s | %d |\n", fixtureTitle(f), t.name, ms(md), ms(lo), ms(hi), ratio(float64(md), float64(bg)), r.gen.lines[f.name][t.name])
		}
	}
	p("\n")
	return b.String()
}

func fixtureTitle(f fixture) string {
	if f.name == "synth" {
		return "synth (200 interfaces × 10 methods)"
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

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func roundDur(d time.Duration) string { return d.Round(time.Second).String() }
