package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The peers' generators, pinned so that a rerun times the same code.
const (
	mockgenPkg = "go.uber.org/mock/mockgen@v0.6.0"
	mockeryPkg = "github.com/vektra/mockery/v3@v3.9.1"
)

// tool is one generator: how to run it on a fixture and what it writes.
type tool struct {
	name    string
	version string
	bin     string
	// cmd returns the command that generates for f in module dir mod, and
	// the file it writes.
	cmd func(mod string, f fixture) (*exec.Cmd, string)
}

// genResults are the timings of every tool on every fixture.
type genResults struct {
	tools    []tool
	fixtures []fixture
	runs     map[string]map[string][]time.Duration // fixture, tool
	lines    map[string]map[string]int             // fixture, tool: lines written
	took     time.Duration
}

// timeGenerators builds each generator once, then times whole processes on
// each fixture, interleaved (breakergen, mockgen, mockery, breakergen, ...),
// after one untimed round that warms the build and module caches. Before
// every run the outputs of all tools are removed, so every run writes its
// file and every tool loads the same sources.
func timeGenerators(o options) (genResults, error) {
	start := time.Now()
	res := genResults{fixtures: fixtures(), runs: map[string]map[string][]time.Duration{}, lines: map[string]map[string]int{}}
	bin := filepath.Join(o.raw, "bin")
	mod := filepath.Join(o.raw, "genbench")
	out := filepath.Join(o.raw, "genout")
	for _, d := range []string{bin, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return res, err
		}
	}
	os.RemoveAll(mod)
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return res, err
	}
	if err := writeFixtures(mod, res.fixtures); err != nil {
		return res, err
	}

	fmt.Fprintln(o.log, "generators: building breakergen, mockgen, mockery")
	gen, err := filepath.Abs(o.gen)
	if err != nil {
		return res, err
	}
	if _, err := os.Stat(filepath.Join(gen, "cmd", "breakergen")); err != nil {
		return res, fmt.Errorf("-gen %s has no cmd/breakergen: %v", o.gen, err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "breakergen"), "./cmd/breakergen")
	build.Dir = gen
	if b, err := build.CombinedOutput(); err != nil {
		return res, fmt.Errorf("building breakergen: %v\n%s", err, b)
	}
	for _, pkg := range []string{mockgenPkg, mockeryPkg} {
		install := exec.Command("go", "install", pkg)
		install.Dir = o.raw
		install.Env = append(os.Environ(), "GOBIN="+bin)
		if b, err := install.CombinedOutput(); err != nil {
			return res, fmt.Errorf("go install %s: %v\n%s", pkg, err, b)
		}
	}
	rev := "unknown"
	if b, err := exec.Command("git", "-C", gen, "rev-parse", "--short", "HEAD").Output(); err == nil {
		rev = strings.TrimSpace(string(b))
	}

	res.tools = []tool{
		{name: "breakergen", version: "commit " + rev, bin: filepath.Join(bin, "breakergen"),
			cmd: func(mod string, f fixture) (*exec.Cmd, string) {
				c := exec.Command(filepath.Join(bin, "breakergen"))
				c.Dir = filepath.Join(mod, f.name)
				return c, filepath.Join(mod, f.name, f.name+"_breaker.go")
			}},
		{name: "mockgen", version: strings.TrimPrefix(mockgenPkg, "go.uber.org/mock/mockgen@"), bin: filepath.Join(bin, "mockgen"),
			cmd: func(mod string, f fixture) (*exec.Cmd, string) {
				dst := filepath.Join(out, "mockgen_"+f.name+".go")
				c := exec.Command(filepath.Join(bin, "mockgen"), "-destination", dst, "-package", "mocks",
					"-self_package", fixtureModule+"/mocks", fixtureModule+"/"+f.name, strings.Join(f.interfaces, ","))
				c.Dir = mod
				return c, dst
			}},
		{name: "mockery", version: strings.TrimPrefix(mockeryPkg, "github.com/vektra/mockery/v3@"), bin: filepath.Join(bin, "mockery"),
			cmd: func(mod string, f fixture) (*exec.Cmd, string) {
				cfg := filepath.Join(out, "mockery-"+f.name+".yml")
				c := exec.Command(filepath.Join(bin, "mockery"), "--config", cfg)
				c.Dir = mod
				return c, filepath.Join(mod, f.name, "mocks_test.go")
			}},
	}
	for _, f := range res.fixtures {
		if err := os.WriteFile(filepath.Join(out, "mockery-"+f.name+".yml"), []byte(mockeryConfig(f)), 0o644); err != nil {
			return res, err
		}
		res.runs[f.name] = map[string][]time.Duration{}
		res.lines[f.name] = map[string]int{}
	}

	clean := func(f fixture) {
		for _, t := range res.tools {
			_, file := t.cmd(mod, f)
			os.Remove(file)
		}
	}
	for round := range o.genruns + 1 { // round 0 warms the caches
		fmt.Fprintf(o.log, "generators: round %d of %d\n", round, o.genruns)
		for _, f := range res.fixtures {
			for _, t := range res.tools {
				clean(f)
				c, file := t.cmd(mod, f)
				var stderr bytes.Buffer
				c.Stderr = &stderr
				t0 := time.Now()
				err := c.Run()
				d := time.Since(t0)
				if err != nil {
					return res, fmt.Errorf("%s on %s: %v\n%s", t.name, f.name, err, stderr.Bytes())
				}
				b, err := os.ReadFile(file)
				if err != nil {
					return res, fmt.Errorf("%s on %s wrote no %s: %v", t.name, f.name, file, err)
				}
				res.lines[f.name][t.name] = bytes.Count(b, []byte("\n"))
				if round > 0 {
					res.runs[f.name][t.name] = append(res.runs[f.name][t.name], d)
				}
			}
		}
	}
	for _, f := range res.fixtures {
		clean(f)
	}
	res.took = time.Since(start)
	return res, nil
}

// mockeryConfig is what `mockery init` writes, with every interface of f's
// package selected and the output written beside it.
func mockeryConfig(f fixture) string {
	return `all: true
dir: '{{.InterfaceDir}}'
filename: mocks_test.go
force-file-write: true
formatter: goimports
log-level: warn
structname: '{{.Mock}}{{.InterfaceName}}'
pkgname: '{{.SrcPackageName}}'
recursive: false
template: testify
packages:
  ` + fixtureModule + "/" + f.name + `:
    config:
      all: true
`
}

// median returns the median run of tool on fixture.
func (g genResults) median(fixture, tool string) time.Duration {
	var v []float64
	for _, d := range g.runs[fixture][tool] {
		v = append(v, float64(d))
	}
	return time.Duration(median(v))
}
