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
	about   string // how it is run, for the report
	// cmds returns the processes that generate for f in module dir mod,
	// run one after the other, and the files they write.
	cmds func(mod string, f fixture) ([]*exec.Cmd, []string)
}

// genResults are the timings of every tool on every fixture.
type genResults struct {
	tools    []tool
	fixtures []fixture
	bin      string                                // where the tools were built
	runs     map[string]map[string][]time.Duration // fixture, tool
	lines    map[string]map[string]int             // fixture, tool: lines written
	ordinary ordinaryResults                       // ordinary.go
	took     time.Duration
}

// timeGenerators builds each generator once, then times whole processes on
// each fixture, interleaved (breakergen, mockgen -source, mockgen package
// mode, mockery, breakergen, ...), after one untimed round that warms the
// build and module caches. Before every run the outputs of all tools are
// removed, so every run writes its files and every tool loads the same
// sources.
func timeGenerators(o options) (genResults, error) {
	start := time.Now()
	res := genResults{fixtures: fixtures(), runs: map[string]map[string][]time.Duration{}, lines: map[string]map[string]int{}}
	bin := filepath.Join(o.raw, "bin")
	res.bin = bin
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
	if err := writeFixtures(mod, "module "+fixtureModule+"\n\ngo 1.26\n", res.fixtures); err != nil {
		return res, err
	}

	fmt.Fprintln(o.log, "generators: building breakergen, mockgen, mockery")
	rev, err := buildTools(o, bin)
	if err != nil {
		return res, err
	}

	breakergen := func(name, version string) tool {
		return tool{name: name, version: version,
			about: "in the package's directory, no arguments (as `go generate` runs it); it writes one `_breaker.go` a source file",
			cmds: func(mod string, f fixture) ([]*exec.Cmd, []string) {
				c := exec.Command(filepath.Join(bin, name))
				c.Dir = filepath.Join(mod, f.name)
				var files []string
				for _, src := range f.files {
					if src.ifaces {
						files = append(files, filepath.Join(mod, f.name, strings.TrimSuffix(src.name, ".go")+"_breaker.go"))
					}
				}
				return []*exec.Cmd{c}, files
			}}
	}
	res.tools = []tool{breakergen("breakergen", "commit "+rev)}
	if o.genbase != "" {
		res.tools = append(res.tools, breakergen("breakergen-base", "commit "+gitRev(o.genbase)))
	}
	res.tools = append(res.tools, []tool{
		{name: "mockgen-source", version: mockgenVersion(),
			about: "source mode, `mockgen -source FILE`: one process a file that declares interfaces (it takes one file), run one after the other as that many `go:generate` lines would",
			cmds: func(mod string, f fixture) ([]*exec.Cmd, []string) {
				var cs []*exec.Cmd
				var files []string
				for _, src := range f.files {
					if !src.ifaces {
						continue
					}
					dst := filepath.Join(out, "mockgen-source_"+f.name+"_"+src.name)
					c := exec.Command(filepath.Join(bin, "mockgen"), "-source", filepath.Join(f.name, src.name),
						"-destination", dst, "-package", "mocks", "-self_package", fixtureModule+"/mocks")
					c.Dir = mod
					cs, files = append(cs, c), append(files, dst)
				}
				return cs, files
			}},
		{name: "mockgen-package", version: mockgenVersion(),
			about: "package mode, `mockgen IMPORTPATH Iface1,Iface2,...`: one process naming every interface",
			cmds: func(mod string, f fixture) ([]*exec.Cmd, []string) {
				dst := filepath.Join(out, "mockgen-package_"+f.name+".go")
				c := exec.Command(filepath.Join(bin, "mockgen"), "-destination", dst, "-package", "mocks",
					"-self_package", fixtureModule+"/mocks", fixtureModule+"/"+f.name, strings.Join(f.interfaces, ","))
				c.Dir = mod
				return []*exec.Cmd{c}, []string{dst}
			}},
		{name: "mockery", version: strings.TrimPrefix(mockeryPkg, "github.com/vektra/mockery/v3@"),
			about: "with the configuration `mockery init` writes and `all: true`",
			cmds: func(mod string, f fixture) ([]*exec.Cmd, []string) {
				cfg := filepath.Join(out, "mockery-"+f.name+".yml")
				c := exec.Command(filepath.Join(bin, "mockery"), "--config", cfg)
				c.Dir = mod
				return []*exec.Cmd{c}, []string{filepath.Join(mod, f.name, "mocks_test.go")}
			}},
	}...)
	for _, f := range res.fixtures {
		if err := os.WriteFile(filepath.Join(out, "mockery-"+f.name+".yml"), []byte(mockeryConfig(f)), 0o644); err != nil {
			return res, err
		}
		res.runs[f.name] = map[string][]time.Duration{}
		res.lines[f.name] = map[string]int{}
	}

	clean := func(f fixture) {
		for _, t := range res.tools {
			_, files := t.cmds(mod, f)
			for _, file := range files {
				os.Remove(file)
			}
		}
	}
	for round := range o.genruns + 1 { // round 0 warms the caches
		fmt.Fprintf(o.log, "generators: round %d of %d\n", round, o.genruns)
		for _, f := range res.fixtures {
			for _, t := range res.tools {
				clean(f)
				cs, files := t.cmds(mod, f)
				t0 := time.Now()
				for _, c := range cs {
					var stderr bytes.Buffer
					c.Stderr = &stderr
					if err := c.Run(); err != nil {
						return res, fmt.Errorf("%s on %s: %v\n%s", t.name, f.name, err, stderr.Bytes())
					}
				}
				d := time.Since(t0)
				n, err := countLines(files)
				if err != nil {
					return res, fmt.Errorf("%s on %s: %v", t.name, f.name, err)
				}
				res.lines[f.name][t.name] = n
				if round > 0 {
					res.runs[f.name][t.name] = append(res.runs[f.name][t.name], d)
				}
			}
		}
	}
	for _, f := range res.fixtures {
		clean(f)
	}
	if res.ordinary, err = timeOrdinary(o, bin); err != nil {
		return res, err
	}
	res.took = time.Since(start)
	return res, nil
}

// buildTools builds breakergen from o.gen and installs mockgen and mockery
// into bin; it returns breakergen's commit.
func buildTools(o options, bin string) (string, error) {
	gen, err := filepath.Abs(o.gen)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(gen, "cmd", "breakergen")); err != nil {
		return "", fmt.Errorf("-gen %s has no cmd/breakergen: %v", o.gen, err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "breakergen"), "./cmd/breakergen")
	build.Dir = gen
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building breakergen: %v\n%s", err, b)
	}
	if o.genbase != "" {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, "breakergen-base"), "./cmd/breakergen")
		build.Dir = o.genbase
		if b, err := build.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building -genbase's breakergen: %v\n%s", err, b)
		}
	}
	for _, pkg := range []string{mockgenPkg, mockeryPkg} {
		install := exec.Command("go", "install", pkg)
		install.Dir = o.raw
		install.Env = append(os.Environ(), "GOBIN="+bin)
		if b, err := install.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go install %s: %v\n%s", pkg, err, b)
		}
	}
	return gitRev(gen), nil
}

// gitRev is the commit checked out in dir, or "unknown".
func gitRev(dir string) string {
	if b, err := exec.Command("git", "-C", dir, "rev-parse", "--short", "HEAD").Output(); err == nil {
		return strings.TrimSpace(string(b))
	}
	return "unknown"
}

func mockgenVersion() string { return strings.TrimPrefix(mockgenPkg, "go.uber.org/mock/mockgen@") }

// countLines returns the lines of files together; each must exist.
func countLines(files []string) (int, error) {
	n := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, fmt.Errorf("wrote no %s: %v", file, err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n, nil
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
