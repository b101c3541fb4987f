package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	common := `package synth

import "errors"

type Quote struct{ Code string; Price float64 }

var ErrNotFound = errors.New("not found")
`
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "common.go"), []byte(common), 0o644))
	for f := 0; f*10 < nIfaces; f++ {
		var b strings.Builder
		b.WriteString("package synth\n\nimport (\n\t\"context\"\n\t\"io\"\n\t\"time\"\n)\n\nvar _ = io.EOF\n")
		for i := f * 10; i < min(nIfaces, (f+1)*10); i++ {
			fmt.Fprintf(&b, "\n// Source%d is a synthetic data source.\n", i)
			fmt.Fprintf(&b, "//breaker:name=s%d threshold=5 reset=30s ratelimit=10/20 exclude=ErrNotFound,io.EOF\n", i)
			fmt.Fprintf(&b, "//breaker:name=s%d-get methods=Get* timeout=2s\n", i)
			fmt.Fprintf(&b, "type Source%d interface {\n", i)
			for m := range nMethods {
				switch m % 5 {
				case 0:
					fmt.Fprintf(&b, "\tGet%d(ctx context.Context, code string) (Quote, error)\n", m)
				case 1:
					fmt.Fprintf(&b, "\t//breaker:timeout=1s\n\tList%d(ctx context.Context, codes ...string) ([]Quote, error)\n", m)
				case 2:
					fmt.Fprintf(&b, "\tAt%d(ctx context.Context, t time.Time, n int) (map[string]Quote, int, error)\n", m)
				case 3:
					fmt.Fprintf(&b, "\tSync%d(code string) error\n", m)
				case 4:
					fmt.Fprintf(&b, "\t//breaker:skip\n\tPing%d(ctx context.Context) error\n", m)
				}
			}
			b.WriteString("}\n")
		}
		require.NoError(t, os.WriteFile(filepath.Join(pkg, fmt.Sprintf("source%02d.go", f)), []byte(b.String()), 0o644))
	}
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
