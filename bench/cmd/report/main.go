// Command report runs the comparative benchmarks, the behaviour and
// allocation tests, the trip-quality tables, the generator timings and the
// compile weight of the bench module, and rewrites ../BENCHMARKS.md from
// that run, with SPEC §7's targets as ratios of rows measured in it. Run it from the bench directory:
//
//	cd bench && go run ./cmd/report
//
// It takes about a quarter of an hour on two cores. Every number and every
// cell of the behaviour table in the file it writes comes from the run.
//
// Flags:
//
//	-gen DIR        the breakergen module whose cmd/breakergen is timed (default "..")
//	-out FILE       the report to write (default "../BENCHMARKS.md")
//	-rounds N       benchmark rounds; each round runs every benchmark once (default 6)
//	-benchtime D    -benchtime of each benchmark run (default 300ms)
//	-genruns N      timed runs of each generator on each package (default 5)
//	-compileruns N  timed builds of the package with each tool's output (default 3)
//	-raw DIR        where to keep the raw outputs (default a temporary directory)
//	-genonly        time the generators only and print their tables and
//	                targets; write no report (for work on the generator)
//	-genbase DIR    also time the cmd/breakergen of the module in DIR (an
//	                older commit's worktree, say) as breakergen-base, in the
//	                same rounds
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "report:", err)
		}
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	gen         string
	out         string
	rounds      int
	benchtime   string
	genruns     int
	compileruns int
	raw         string
	genonly     bool
	genbase     string
	log         io.Writer
	args        []string // as given, for the report
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{log: stdout, args: args}
	fs.StringVar(&o.gen, "gen", "..", "the breakergen `module` whose cmd/breakergen is timed")
	fs.StringVar(&o.out, "out", "../BENCHMARKS.md", "the report `file` to write")
	fs.IntVar(&o.rounds, "rounds", 6, "benchmark rounds; each runs every benchmark once")
	fs.StringVar(&o.benchtime, "benchtime", "300ms", "-benchtime of each benchmark run")
	fs.IntVar(&o.genruns, "genruns", 5, "timed runs of each generator on each package")
	fs.IntVar(&o.compileruns, "compileruns", 3, "timed builds of the 200×10 package with each tool's output")
	fs.StringVar(&o.raw, "raw", "", "`dir` to keep the raw outputs in (default a temporary one)")
	fs.BoolVar(&o.genonly, "genonly", false, "time the generators only, print their tables and targets, and write no report")
	fs.StringVar(&o.genbase, "genbase", "", "also time the cmd/breakergen of the module in `dir` as breakergen-base, in the same rounds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.rounds < 1 || o.genruns < 1 || o.compileruns < 1 {
		return errors.New("-rounds, -genruns and -compileruns must be at least 1")
	}
	if o.raw == "" {
		dir, err := os.MkdirTemp("", "breakergen-bench-")
		if err != nil {
			return err
		}
		o.raw = dir
	} else if err := os.MkdirAll(o.raw, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(o.log, "raw outputs in %s\n", o.raw)

	start := time.Now()
	m, err := describeMachine()
	if err != nil {
		return err
	}
	if o.genonly {
		return runGenOnly(o, m, start, stdout)
	}
	beh, err := runBehaviour(o)
	if err != nil {
		return err
	}
	trips, err := runTripQuality(o)
	if err != nil {
		return err
	}
	gens, err := timeGenerators(o)
	if err != nil {
		return err
	}
	weight, err := measureWeight(o, gens)
	if err != nil {
		return err
	}
	res, err := runBenchmarks(o)
	if err != nil {
		return err
	}
	m.loadEnd = loadavg()
	rep := report{machine: m, opts: o, bench: res, behaviour: beh, tripQuality: trips, gen: gens, weight: weight, took: time.Since(start)}
	text := rep.markdown()
	if err := os.WriteFile(o.out, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(o.log, "wrote %s\n", o.out)
	for _, t := range rep.targets() {
		fmt.Fprintf(o.log, "%s: %s\n", t.name, t.verdict)
	}
	return nil
}

// runGenOnly times the generators alone (-genonly) and prints what the
// report's Generators section and its generator targets would say: the
// measurement to take while working on the generator. The report is left
// as it is.
func runGenOnly(o options, m machine, start time.Time, stdout io.Writer) error {
	gens, err := timeGenerators(o)
	if err != nil {
		return err
	}
	m.loadEnd = loadavg()
	rep := report{machine: m, opts: o, gen: gens, took: time.Since(start)}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("load average at start %s, at the end %s; %s\n\n", m.loadavg, m.loadEnd, roundDur(rep.took))
	rep.generatorsSection(p)
	for _, t := range rep.generatorTargets() {
		p("%s: %s\n  %s\n", t.name, t.verdict, t.measured)
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}
