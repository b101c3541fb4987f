package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeSynthetic writes into dir (a module) a package of nIfaces annotated
// interfaces with nMethods methods each, spread over files of 10
// interfaces, with the usual shapes: ctx first or not, variadics, several
// results, routes by methods globs, method lines, skips.
func writeSynthetic(t testing.TB, dir string, nIfaces, nMethods int) {
	t.Helper()
	pkg := filepath.Join(dir, "synth")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "common.go"), []byte(syntheticCommon("synth")), 0o644))
	for f := 0; f*10 < nIfaces; f++ {
		var b strings.Builder
		b.WriteString(syntheticImports("synth"))
		for i := f * 10; i < min(nIfaces, (f+1)*10); i++ {
			syntheticInterface(&b, i, nMethods)
		}
		require.NoError(t, os.WriteFile(filepath.Join(pkg, fmt.Sprintf("source%02d.go", f)), []byte(b.String()), 0o644))
	}
}

// writeSyntheticOneFile writes the interfaces of writeSynthetic into one
// file, dir/name/all.go, of package name: mockgen's source mode reads one
// file.
func writeSyntheticOneFile(t testing.TB, dir, name string, nIfaces, nMethods int) {
	t.Helper()
	pkg := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "common.go"), []byte(syntheticCommon(name)), 0o644))
	var b strings.Builder
	b.WriteString(syntheticImports(name))
	for i := range nIfaces {
		syntheticInterface(&b, i, nMethods)
	}
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "all.go"), []byte(b.String()), 0o644))
}

func syntheticCommon(pkg string) string {
	return "package " + pkg + `

import "errors"

type Quote struct{ Code string; Price float64 }

var ErrNotFound = errors.New("not found")
`
}

func syntheticImports(pkg string) string {
	return "package " + pkg + "\n\nimport (\n\t\"context\"\n\t\"io\"\n\t\"time\"\n)\n\nvar _ = io.EOF\n"
}

// syntheticInterface writes the i-th interface of the synthetic package.
func syntheticInterface(b *strings.Builder, i, nMethods int) {
	fmt.Fprintf(b, "\n// Source%d is a synthetic data source.\n", i)
	fmt.Fprintf(b, "//breaker:name=s%d threshold=5 reset=30s ratelimit=10/20 exclude=ErrNotFound,io.EOF\n", i)
	fmt.Fprintf(b, "//breaker:name=s%d-get methods=Get* timeout=2s\n", i)
	fmt.Fprintf(b, "type Source%d interface {\n", i)
	for m := range nMethods {
		switch m % 5 {
		case 0:
			fmt.Fprintf(b, "\tGet%d(ctx context.Context, code string) (Quote, error)\n", m)
		case 1:
			fmt.Fprintf(b, "\t//breaker:timeout=1s\n\tList%d(ctx context.Context, codes ...string) ([]Quote, error)\n", m)
		case 2:
			fmt.Fprintf(b, "\tAt%d(ctx context.Context, t time.Time, n int) (map[string]Quote, int, error)\n", m)
		case 3:
			fmt.Fprintf(b, "\tSync%d(code string) error\n", m)
		case 4:
			fmt.Fprintf(b, "\t//breaker:skip\n\tPing%d(ctx context.Context) error\n", m)
		}
	}
	b.WriteString("}\n")
}

// BenchmarkGenerate200x10 measures whole-process runs of the breakergen
// binary (built once) over a synthetic package of 200 annotated interfaces
// of 10 methods: the first run writes 20 files; the timed runs are warm
// (build cache filled, outputs present), and do everything but write.
func BenchmarkGenerate200x10(b *testing.B) {
	dir := b.TempDir()
	writeModule(b, dir)
	writeSynthetic(b, dir, 200, 10)
	bin := filepath.Join(b.TempDir(), "breakergen")
	goCmd(b, repoRoot(), "go", "build", "-o", bin, "./cmd/breakergen")
	goCmd(b, dir, bin, "./...") // first generation, and a warm cache
	out := goCmd(b, dir, "go", "vet", "./...")
	require.Empty(b, out)
	for b.Loop() {
		goCmd(b, dir, bin, "./...")
	}
}

// BenchmarkGenerateInProcess200x10 is BenchmarkGenerate200x10 inside the
// test process, with main's collector setting, so that a profile sees every
// phase (loading, model, render, write):
//
//	go test -run '^$' -bench GenerateInProcess200x10 -benchtime 10x \
//		-cpuprofile cpu.out -o breakergen.test ./cmd/breakergen
//	go tool pprof -top -cum breakergen.test cpu.out
func BenchmarkGenerateInProcess200x10(b *testing.B) {
	dir := b.TempDir()
	writeModule(b, dir)
	writeSynthetic(b, dir, 200, 10)
	o := &options{patterns: []string{"./..."}, dir: dir, env: goEnv()}
	var stdout, stderr strings.Builder
	require.NoError(b, generate(o, &stdout, &stderr), stderr.String()) // first generation
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	for b.Loop() {
		require.NoError(b, generate(o, &stdout, &stderr), stderr.String())
	}
}

// BenchmarkGenerateInProcessOneFile200x10 is BenchmarkGenerateInProcess200x10
// on the same interfaces in one file (the report's synthone), its output
// removed before each run, so that every run writes it:
//
//	go test -run '^$' -bench GenerateInProcessOneFile -benchtime 15x \
//		-cpuprofile cpu.out -o breakergen.test ./cmd/breakergen
func BenchmarkGenerateInProcessOneFile200x10(b *testing.B) {
	dir := b.TempDir()
	writeModule(b, dir)
	writeSyntheticOneFile(b, dir, "one", 200, 10)
	o := &options{patterns: []string{"."}, dir: filepath.Join(dir, "one"), env: goEnv()}
	var stdout, stderr strings.Builder
	require.NoError(b, generate(o, &stdout, &stderr), stderr.String()) // a warm cache
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	for b.Loop() {
		require.NoError(b, os.Remove(filepath.Join(dir, "one", "all_breaker.go")))
		require.NoError(b, generate(o, &stdout, &stderr), stderr.String())
	}
}

// BenchmarkGeneratorPeers times whole processes over the 200x10 synthetic
// package, interleaved: every round runs each tool once, in an order that
// rotates from round to round, after one untimed round that warms the
// caches. It reports each tool's median wall time (-ms) and median CPU time
// (-cpu-ms: user and system, the go command's children included), and the
// ratio of breakergen's median wall time to mockgen's in source mode:
//
//   - breakergen: this tree's binary, its outputs present, so a warm
//     regeneration that writes nothing
//   - breakergen-base: the same with the binary $BREAKERGEN_BASE names
//     (built from an older commit, say), when it is set
//   - mockgen-source: mockgen -source on one file holding the 200
//     interfaces (source mode reads one file)
//   - mockgen-package: mockgen in package mode on the synthetic package
//   - mockery: mockery (testify template, the config mockery init writes),
//     when it is on PATH
//
// It skips unless mockgen is on PATH. With the versions that
// bench/cmd/report pins, and an older breakergen beside this one:
//
//	GOBIN=/tmp/peers go install go.uber.org/mock/mockgen@v0.6.0
//	GOBIN=/tmp/peers go install github.com/vektra/mockery/v3@v3.9.1
//	git archive dd0a4f5 | (mkdir /tmp/base && tar -x -C /tmp/base)
//	(cd /tmp/base && go build -o /tmp/peers/breakergen-base ./cmd/breakergen)
//	PATH=/tmp/peers:$PATH BREAKERGEN_BASE=/tmp/peers/breakergen-base \
//		go test -run '^$' -bench GeneratorPeers -benchtime 15x ./cmd/breakergen
func BenchmarkGeneratorPeers(b *testing.B) {
	mockgen, err := exec.LookPath("mockgen")
	if err != nil {
		b.Skip("mockgen is not on PATH")
	}
	dir := b.TempDir()
	writeModule(b, dir)
	writeSynthetic(b, dir, 200, 10)
	writeSyntheticOneFile(b, dir, "one", 200, 10)
	out := filepath.Join(dir, "out")
	require.NoError(b, os.MkdirAll(out, 0o755))
	bin := filepath.Join(b.TempDir(), "breakergen")
	goCmd(b, repoRoot(), "go", "build", "-o", bin, "./cmd/breakergen")

	type peer struct {
		name      string
		dir, path string
		args      []string
		wall, cpu []time.Duration
	}
	peers := []*peer{{name: "breakergen", dir: dir, path: bin, args: []string{"./synth"}}}
	if base := os.Getenv("BREAKERGEN_BASE"); base != "" {
		// A module of its own, in case its outputs differ from ours.
		baseDir := b.TempDir()
		writeModule(b, baseDir)
		writeSynthetic(b, baseDir, 200, 10)
		peers = append(peers, &peer{name: "breakergen-base", dir: baseDir, path: base, args: []string{"./synth"}})
	}
	ifaces := make([]string, 200)
	for i := range ifaces {
		ifaces[i] = fmt.Sprintf("Source%d", i)
	}
	peers = append(peers,
		&peer{name: "mockgen-source", dir: dir, path: mockgen, args: []string{
			"-source=one/all.go", "-destination=" + filepath.Join(out, "source.go"), "-package=mocks"}},
		&peer{name: "mockgen-package", dir: dir, path: mockgen, args: []string{
			"-destination=" + filepath.Join(out, "package.go"), "-package=mocks", "-self_package=example.com/x/mocks",
			"example.com/x/synth", strings.Join(ifaces, ",")}})
	if mockery, err := exec.LookPath("mockery"); err == nil {
		cfg := filepath.Join(out, "mockery.yml")
		require.NoError(b, os.WriteFile(cfg, []byte(`all: true
dir: '`+filepath.Join(out, "mockery")+`'
filename: mocks.go
force-file-write: true
formatter: goimports
log-level: warn
structname: '{{.Mock}}{{.InterfaceName}}'
pkgname: mocks
recursive: false
template: testify
packages:
  example.com/x/synth:
    config:
      all: true
`), 0o644))
		peers = append(peers, &peer{name: "mockery", dir: dir, path: mockery, args: []string{"--config", cfg}})
	}

	run := func(p *peer) (wall, cpu time.Duration) {
		cmd := exec.Command(p.path, p.args...)
		cmd.Dir, cmd.Env = p.dir, goEnv()
		t0 := time.Now()
		msg, err := cmd.CombinedOutput()
		wall = time.Since(t0)
		require.NoError(b, err, "%s: %s", p.name, msg)
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	for _, p := range peers {
		run(p) // the first generation, and warm caches
	}
	round := 0
	for b.Loop() {
		for k := range peers {
			p := peers[(k+round)%len(peers)]
			wall, cpu := run(p)
			p.wall, p.cpu = append(p.wall, wall), append(p.cpu, cpu)
		}
		round++
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, p := range peers {
		b.ReportMetric(ms(medianOf(p.wall)), p.name+"-ms")
		b.ReportMetric(ms(medianOf(p.cpu)), p.name+"-cpu-ms")
	}
	source := peers[slices.IndexFunc(peers, func(p *peer) bool { return p.name == "mockgen-source" })]
	b.ReportMetric(float64(medianOf(peers[0].wall))/float64(medianOf(source.wall)), "x-mockgen-source")
}

func medianOf(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestSynthetic checks that the benchmark's package generates and vets.
func TestSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and vets a 20x10 package")
	}
	dir := t.TempDir()
	writeModule(t, dir)
	writeSynthetic(t, dir, 20, 10)
	o := &options{patterns: []string{"./..."}, dir: dir, env: goEnv()}
	var stdout, stderr strings.Builder
	require.NoError(t, generate(o, &stdout, &stderr), stderr.String())
	goCmd(t, dir, "go", "vet", "./...")
	files, _ := filepath.Glob(filepath.Join(dir, "synth", "*_breaker.go"))
	require.Len(t, files, 2)
}
