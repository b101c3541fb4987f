package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Two more generator timings (issue 23), in the setup a user has rather
// than a package of interfaces alone:
//
//   - ordinary: the synth package (200 interfaces × 10 methods, 20 files)
//     that also holds the mocks of the usual tools, all written into it as
//     _test.go files: mockgen -source (a file a source file, package
//     ordinary), mockgen package mode (one file, package ordinary_test) and
//     mockery (one file, package ordinary). Every round runs each tool in
//     turn, so each regenerates its files before the next one's run, and
//     nothing is removed: breakergen regenerates beside its earlier outputs,
//     as `go generate` does. ordinaryone is the same with synthone's layout
//     (the 200 interfaces in one file, so one mockgen -source process), the
//     issue's own setup; a round times both packages, one after the other.
//   - generate20: `go generate ./...` over a module of 20 annotated packages
//     (10 interfaces × 10 methods in 2 files each), with one
//     `//go:generate` line for breakergen a package and one for
//     `mockgen -source` a source file; `-run` selects one tool a run.

const (
	ordinaryModule   = "example.com/genordinary"
	generate20Module = "example.com/gen20"
	generate20Pkgs   = 20
)

// ordinaryTools are the tools timed in the ordinary package, in their
// order in a round.
var ordinaryTools = []string{"mockgen-source", "mockgen-package", "mockery", "breakergen"}

// ordinaryResults are the ordinary packages' timings and the 20 packages'.
type ordinaryResults struct {
	layouts []ordinaryLayout           // ordinary (20 files), ordinaryone (one file)
	gen20   map[string][]time.Duration // "breakergen", "mockgen-source"
	lines20 map[string]int
}

// ordinaryLayout is one ordinary package and its timings.
type ordinaryLayout struct {
	fixture fixture
	title   string                     // for the report
	runs    map[string][]time.Duration // tool
	lines   map[string]int             // tool: lines in its files
}

// layout returns the ordinary package called name, if it was timed.
func (r ordinaryResults) layout(name string) (ordinaryLayout, bool) {
	for _, l := range r.layouts {
		if l.fixture.name == name && len(l.runs) > 0 {
			return l, true
		}
	}
	return ordinaryLayout{}, false
}

// ordinaryGoMod is the go.mod of both modules: the mocks import gomock and
// testify, the wrappers the breakergen runtime (from gen).
func ordinaryGoMod(module, gen string) string {
	return "module " + module + "\n\ngo 1.26\n\nrequire (\n\tgithub.com/breakergen/breakergen v0.0.0\n\tgithub.com/stretchr/testify v1.12.1\n\tgo.uber.org/mock " +
		mockgenVersion() + "\n)\n\nreplace github.com/breakergen/breakergen => " + gen + "\n"
}

// timeOrdinary times the tools in bin on the ordinary packages and the 20
// packages, o.genruns interleaved rounds each after an untimed one (after
// which `go mod tidy` completes go.sum).
func timeOrdinary(o options, bin string) (ordinaryResults, error) {
	res := ordinaryResults{gen20: map[string][]time.Duration{}, lines20: map[string]int{}}
	for _, l := range []struct {
		name, title string
		perFile     int
	}{
		{"ordinary", "ordinary (synth's layout: 20 files)", 10},
		{"ordinaryone", "ordinaryone (synthone's layout: one file)", 200},
	} {
		res.layouts = append(res.layouts, ordinaryLayout{fixture: synthFixture(l.name, 200, 10, l.perFile), title: l.title,
			runs: map[string][]time.Duration{}, lines: map[string]int{}})
	}
	gen, err := filepath.Abs(o.gen)
	if err != nil {
		return res, err
	}
	mod := filepath.Join(o.raw, "genordinary")
	os.RemoveAll(mod)
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return res, err
	}
	var fs []fixture
	for _, l := range res.layouts {
		fs = append(fs, l.fixture)
	}
	if err := writeFixtures(mod, ordinaryGoMod(ordinaryModule, gen), fs); err != nil {
		return res, err
	}
	for _, f := range fs {
		if err := os.WriteFile(filepath.Join(o.raw, "mockery-"+f.name+".yml"), []byte(ordinaryMockeryConfig(f)), 0o644); err != nil {
			return res, err
		}
	}
	tools := ordinaryTools
	if o.genbase != "" {
		tools = append(slices.Clip(tools), "breakergen-base")
	}
	for round := range o.genruns + 1 {
		fmt.Fprintf(o.log, "generators, ordinary packages: round %d of %d\n", round, o.genruns)
		for _, l := range res.layouts {
			for _, t := range tools {
				cs, files := ordinaryCmds(mod, bin, filepath.Join(o.raw, "mockery-"+l.fixture.name+".yml"), l.fixture, t)
				d, err := runAll(cs)
				if err != nil {
					return res, fmt.Errorf("ordinary package %s: %s: %v", l.fixture.name, t, err)
				}
				if l.lines[t], err = countLines(files); err != nil {
					return res, fmt.Errorf("ordinary package %s: %s: %v", l.fixture.name, t, err)
				}
				if round > 0 {
					l.runs[t] = append(l.runs[t], d)
				}
			}
		}
		if round == 0 {
			if err := tidy(mod); err != nil {
				return res, err
			}
		}
	}

	// The 20 packages.
	mod20 := filepath.Join(o.raw, "gen20")
	os.RemoveAll(mod20)
	if err := os.MkdirAll(mod20, 0o755); err != nil {
		return res, err
	}
	var pkgs []fixture
	for i := range generate20Pkgs {
		p := synthFixture(fmt.Sprintf("p%02d", i), 10, 10, 5)
		gen := "package " + p.name + "\n\n//go:generate $BREAKERGEN\n"
		for _, src := range p.files {
			if src.ifaces {
				base := strings.TrimSuffix(src.name, ".go")
				gen += fmt.Sprintf("//go:generate $MOCKGEN -source=%s -destination=%s_mock_test.go -package=%s -self_package=%s/%s\n",
					src.name, base, p.name, generate20Module, p.name)
			}
		}
		p.files = append(p.files, file{name: "generate.go", src: gen})
		pkgs = append(pkgs, p)
	}
	if err := writeFixtures(mod20, ordinaryGoMod(generate20Module, gen), pkgs); err != nil {
		return res, err
	}
	env := append(os.Environ(), "BREAKERGEN="+filepath.Join(bin, "breakergen"), "MOCKGEN="+filepath.Join(bin, "mockgen"))
	for round := range o.genruns + 1 {
		fmt.Fprintf(o.log, "generators, go generate over %d packages: round %d of %d\n", generate20Pkgs, round, o.genruns)
		for _, t := range []string{"breakergen", "mockgen-source"} {
			run := `^//go:generate \$BREAKERGEN`
			glob := "*_breaker.go"
			if t == "mockgen-source" {
				run, glob = `^//go:generate \$MOCKGEN -source`, "*_mock_test.go"
			}
			c := exec.Command("go", "generate", "-run", run, "./...")
			c.Dir, c.Env = mod20, env
			d, err := runAll([]*exec.Cmd{c})
			if err != nil {
				return res, fmt.Errorf("go generate over %d packages: %s: %v", generate20Pkgs, t, err)
			}
			files, _ := filepath.Glob(filepath.Join(mod20, "*", glob))
			if len(files) != 2*generate20Pkgs {
				return res, fmt.Errorf("go generate over %d packages: %s wrote %d files, want %d", generate20Pkgs, t, len(files), 2*generate20Pkgs)
			}
			if res.lines20[t], err = countLines(files); err != nil {
				return res, err
			}
			if round > 0 {
				res.gen20[t] = append(res.gen20[t], d)
			}
		}
		if round == 0 {
			if err := tidy(mod20); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// ordinaryCmds returns the processes by which tool regenerates its files
// in the ordinary package f of module mod (mockery with the configuration
// cfg), and those files.
func ordinaryCmds(mod, bin, cfg string, f fixture, tool string) ([]*exec.Cmd, []string) {
	pkg := filepath.Join(mod, f.name)
	var cs []*exec.Cmd
	var files []string
	add := func(dir, file string, name string, args ...string) {
		c := exec.Command(filepath.Join(bin, name), args...)
		c.Dir = dir
		cs = append(cs, c)
		if file != "" {
			files = append(files, file)
		}
	}
	switch tool {
	case "mockgen-source":
		for _, src := range f.files {
			if src.ifaces {
				dst := filepath.Join(pkg, strings.TrimSuffix(src.name, ".go")+"_mock_test.go")
				add(mod, dst, "mockgen", "-source", filepath.Join(f.name, src.name), "-destination", dst,
					"-package", f.name, "-self_package", ordinaryModule+"/"+f.name)
			}
		}
	case "mockgen-package":
		dst := filepath.Join(pkg, "mockgen_test.go")
		add(mod, dst, "mockgen", "-destination", dst, "-package", f.name+"_test",
			ordinaryModule+"/"+f.name, strings.Join(f.interfaces, ","))
	case "mockery":
		add(mod, filepath.Join(pkg, "mocks_test.go"), "mockery", "--config", cfg)
	case "breakergen", "breakergen-base":
		add(pkg, "", tool)
		for _, src := range f.files {
			if src.ifaces {
				files = append(files, filepath.Join(pkg, strings.TrimSuffix(src.name, ".go")+"_breaker.go"))
			}
		}
	}
	return cs, files
}

// runAll runs the processes one after the other and returns their time.
func runAll(cs []*exec.Cmd) (time.Duration, error) {
	t0 := time.Now()
	for _, c := range cs {
		var stderr bytes.Buffer
		c.Stderr = &stderr
		if err := c.Run(); err != nil {
			return 0, fmt.Errorf("%s: %v\n%s", strings.Join(c.Args, " "), err, stderr.Bytes())
		}
	}
	return time.Since(t0), nil
}

// tidy completes go.sum (and go.mod's indirect requirements) of mod.
func tidy(mod string) error {
	c := exec.Command("go", "mod", "tidy")
	c.Dir = mod
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy in %s: %v\n%s", mod, err, out)
	}
	return nil
}

// ordinaryMockeryConfig is mockeryConfig for the ordinary package, its mocks
// named MockeryX so that they sit beside mockgen's MockX in one package.
func ordinaryMockeryConfig(f fixture) string {
	cfg := strings.Replace(mockeryConfig(f), "structname: '{{.Mock}}{{.InterfaceName}}'", "structname: 'Mockery{{.InterfaceName}}'", 1)
	return strings.ReplaceAll(cfg, fixtureModule+"/", ordinaryModule+"/")
}

// median returns the median run of tool in the ordinary package.
func (l ordinaryLayout) median(tool string) time.Duration { return medianDur(l.runs[tool]) }

func medianDur(ds []time.Duration) time.Duration {
	v := make([]float64, 0, len(ds))
	for _, d := range ds {
		v = append(v, float64(d))
	}
	return time.Duration(median(v))
}

// ordinarySection: the tables of timeOrdinary.
func (r report) ordinarySection(p func(string, ...any)) {
	g := r.gen.ordinary
	if len(g.layouts) == 0 || len(g.layouts[0].runs) == 0 {
		return
	}
	p("### In an ordinary package\n\n")
	p("The 200 interfaces × 10 methods in a package that also holds the mocks of the usual tools as `_test.go` files: ")
	p("mockgen -source (a `_mock_test.go` a source file, package `P`), mockgen package mode (`mockgen_test.go`, package `P_test`) and mockery (`mocks_test.go`, package `P`, mocks named `MockeryX`); ")
	p("in synth's layout (20 files, package `ordinary`) and in synthone's (one file, package `ordinaryone`: one mockgen -source process). ")
	p("Each of %d interleaved rounds (after an untimed one) runs mockgen -source, mockgen package mode, mockery and breakergen in turn on each package, ", r.opts.genruns)
	p("so every tool regenerates its files before breakergen's run; nothing is removed, and breakergen regenerates beside its earlier outputs, as `go generate` does. Commands as above.\n\n")
	p("| package | tool | median | min | max | × breakergen | lines written |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, l := range g.layouts {
		bg := l.median("breakergen")
		for _, t := range append(slices.Clip(ordinaryTools), "breakergen-base") {
			runs := l.runs[t]
			if len(runs) == 0 {
				continue
			}
			md := l.median(t)
			p("| %s | %s | %s | %s | %s | %s | %d |\n", l.title, t, ms(md), ms(slices.Min(runs)), ms(slices.Max(runs)), ratio(float64(md), float64(bg)), l.lines[t])
		}
	}
	p("\n### go generate over %d packages\n\n", generate20Pkgs)
	p("`go generate -run RE ./...` in a module of %d packages (10 annotated interfaces × 10 methods in 2 files each), whose `generate.go` has `//go:generate $BREAKERGEN` ", generate20Pkgs)
	p("and one `//go:generate $MOCKGEN -source=F -destination=F_mock_test.go ...` a source file (%d breakergen processes, %d mockgen ones; `go tool X` in these lines would add the go command's start to each); ", generate20Pkgs, 2*generate20Pkgs)
	p("the whole `go generate` is timed, %d interleaved rounds after an untimed one, outputs kept (regeneration).\n\n", r.opts.genruns)
	p("| tool | median | min | max | × breakergen | lines written |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	bg20 := medianDur(g.gen20["breakergen"])
	for _, t := range []string{"breakergen", "mockgen-source"} {
		runs := g.gen20[t]
		if len(runs) == 0 {
			continue
		}
		md := medianDur(runs)
		p("| %s | %s | %s | %s | %s | %d |\n", t, ms(md), ms(slices.Min(runs)), ms(slices.Max(runs)), ratio(float64(md), float64(bg20)), g.lines20[t])
	}
	p("\n")
}
