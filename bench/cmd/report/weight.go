package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The compile weight: how long `go build` takes, and how much memory, for
// the synth package (200 interfaces × 10 methods) alone, with breakergen's
// wrappers, and with mockgen's mocks of the same interfaces written into
// the same package. Each build misses the build cache for that package
// only: a file holding a fresh constant changes the package's inputs,
// while the standard library, the breakergen runtime and gomock stay
// cached from an untimed build. So each run is what a user waits for after
// regenerating: the go command's own work plus compiling that one package.

// weightVariants are the copies of the package that are built.
var weightVariants = []string{"sources", "breakergen", "mockgen"}

// weightResults are the builds of each variant.
type weightResults struct {
	fixture fixture
	lines   map[string]int // variant: generated lines
	runs    map[string][]compileRun
	took    time.Duration
}

// compileRun is one `go build` of one variant.
type compileRun struct {
	wall time.Duration
	rss  int64 // peak resident set of the go command and its children, KiB
}

const weightModule = "example.com/genweight"

// measureWeight writes a module with one copy of the synth package a
// variant, generates breakergen's wrappers and mockgen's mocks (package
// mode, into the package) with the tools timeGenerators built, builds
// everything once, then times o.compileruns builds of each variant,
// interleaved.
func measureWeight(o options, g genResults) (weightResults, error) {
	start := time.Now()
	res := weightResults{lines: map[string]int{}, runs: map[string][]compileRun{}}
	i := slices.IndexFunc(g.fixtures, func(f fixture) bool { return f.name == "synth" })
	if i < 0 {
		return res, fmt.Errorf("compile weight: no synth fixture")
	}
	res.fixture = g.fixtures[i]
	gen, err := filepath.Abs(o.gen)
	if err != nil {
		return res, err
	}
	dir := filepath.Join(o.raw, "genweight")
	os.RemoveAll(dir)
	var copies []fixture
	for _, v := range weightVariants {
		f := res.fixture
		f.name = v
		copies = append(copies, f)
	}
	gomod := "module " + weightModule + "\n\ngo 1.26\n\nrequire github.com/breakergen/breakergen v0.0.0\n\nreplace github.com/breakergen/breakergen => " + gen + "\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	if err := writeFixtures(dir, gomod, copies); err != nil {
		return res, err
	}
	fmt.Fprintln(o.log, "compile weight: generating")
	bg := exec.Command(filepath.Join(g.bin, "breakergen"))
	bg.Dir = filepath.Join(dir, "breakergen")
	mock := filepath.Join(dir, "mockgen", "mock_synth.go")
	mg := exec.Command(filepath.Join(g.bin, "mockgen"), "-destination", mock, "-package", res.fixture.name,
		"-self_package", weightModule+"/mockgen", weightModule+"/mockgen", strings.Join(res.fixture.interfaces, ","))
	mg.Dir = dir
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	for _, c := range []*exec.Cmd{bg, mg, tidy} {
		if out, err := c.CombinedOutput(); err != nil {
			return res, fmt.Errorf("compile weight: %s: %v\n%s", strings.Join(c.Args, " "), err, out)
		}
	}
	wrappers, _ := filepath.Glob(filepath.Join(dir, "breakergen", "*_breaker.go"))
	for v, files := range map[string][]string{"breakergen": wrappers, "mockgen": {mock}} {
		if res.lines[v], err = countLines(files); err != nil {
			return res, err
		}
	}
	if res.lines["breakergen"] == 0 {
		return res, fmt.Errorf("compile weight: breakergen wrote nothing in %s", bg.Dir)
	}

	warm := exec.Command("go", "build", "./...")
	warm.Dir = dir
	if out, err := warm.CombinedOutput(); err != nil {
		return res, fmt.Errorf("compile weight: go build ./...: %v\n%s", err, out)
	}
	for round := range o.compileruns {
		fmt.Fprintf(o.log, "compile weight: round %d of %d\n", round+1, o.compileruns)
		for _, v := range weightVariants {
			nonce := fmt.Sprintf("package %s\n\n// buildNonce makes this build miss the cache.\nconst buildNonce = %q\n",
				res.fixture.name, fmt.Sprint(v, round, time.Now().UnixNano()))
			if err := os.WriteFile(filepath.Join(dir, v, "nonce.go"), []byte(nonce), 0o644); err != nil {
				return res, err
			}
			c := exec.Command("go", "build", "./"+v)
			c.Dir = dir
			t0 := time.Now()
			out, err := c.CombinedOutput()
			d := time.Since(t0)
			if err != nil {
				return res, fmt.Errorf("compile weight: go build ./%s: %v\n%s", v, err, out)
			}
			r := compileRun{wall: d}
			if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
				r.rss = ru.Maxrss // KiB on Linux; includes the waited-for compile
			}
			res.runs[v] = append(res.runs[v], r)
		}
	}
	res.took = time.Since(start)
	return res, nil
}

// median returns the median wall time and peak RSS (KiB) of variant v.
func (w weightResults) median(v string) (time.Duration, int64) {
	var ts, rs []float64
	for _, r := range w.runs[v] {
		ts, rs = append(ts, float64(r.wall)), append(rs, float64(r.rss))
	}
	return time.Duration(median(ts)), int64(median(rs))
}

// spread returns the fastest and slowest build of v.
func (w weightResults) spread(v string) (time.Duration, time.Duration) {
	ts := make([]time.Duration, 0, len(w.runs[v]))
	for _, r := range w.runs[v] {
		ts = append(ts, r.wall)
	}
	if len(ts) == 0 {
		return 0, 0
	}
	return slices.Min(ts), slices.Max(ts)
}

// perMethod returns the generated lines a method of variant v.
func (w weightResults) perMethod(v string) float64 {
	if w.fixture.methods == 0 {
		return 0
	}
	return float64(w.lines[v]) / float64(w.fixture.methods)
}
