package load

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

// TestMatchPattern: "..." is a wildcard anywhere, as for the go command.
func TestMatchPattern(t *testing.T) {
	for _, tt := range []struct {
		pattern, name string
		want          bool
	}{
		{"example.com/m/a", "example.com/m/a", true},
		{"example.com/m/a", "example.com/m/ab", false},
		{"example.com/m/...", "example.com/m", true}, // x/... matches x
		{"example.com/m/...", "example.com/m/a/b", true},
		{"example.com/m/...", "example.com/mx", false},
		{"example.com/m/svc_...", "example.com/m/svc_a", true}, // ... after no slash
		{"example.com/m/svc_...", "example.com/m/svc_a/sub", true},
		{"example.com/m/svc_...", "example.com/m/svc", false},
		{"example.com/m/svc_...", "example.com/m/other", false},
		{"example.com/.../api", "example.com/m/api", true}, // ... in the middle
		{"example.com/.../api", "example.com/m/x/api", true},
		{"example.com/.../api", "example.com/m/apis", false},
		{"...", "anything/at/all", true},
		{"net/...", "net", true},
		{"net...", "netip", true},
		{"./...", "./.", true},
		{"./...", "./a/b", true},
		{"./...", "../a", false},
		{"./svc_...", "./svc_a", true},
		{"./svc_...", "./svc", false},
		{"./...", "./vendor", true}, // a package named vendor
		{"./...", "./vendor/x", false},
		{"./vendor/...", "./vendor/x", true},
		{"./...", "./a/vendor/x", false},
		{"./a/vendor/...", "./a/vendor/x", true},
		{"a.b", "axb", false}, // no regexp leaks through
	} {
		assert.Equal(t, tt.want, matchPattern(tt.pattern)(tt.name), "%s matching %s", tt.pattern, tt.name)
	}
}

func TestMatchesAny(t *testing.T) {
	dir := filepath.FromSlash("/m")
	pkg := func(path string) *packages.Package {
		d := filepath.FromSlash("/m" + strings.TrimPrefix(path, "example.com/m"))
		return &packages.Package{PkgPath: path, Dir: d, GoFiles: []string{filepath.Join(d, "x.go")}}
	}
	list := []*packages.Package{pkg("example.com/m/a"), pkg("example.com/m/b/c"), pkg("example.com/m/svc_a"), pkg("example.com/m/svc_b")}
	for pattern, want := range map[string]bool{
		"./a":                     true,
		"./a/...":                 true,
		"./...":                   true,
		"./b/...":                 true,
		"./b":                     false,
		"./z/...":                 false,
		"./svc_...":               true,
		"./svc_a...":              true,
		"./svc_c...":              false,
		"./.../c":                 true,
		"./b/c/../../svc_...":     true,
		"../m/svc_...":            true,
		"/m/svc_...":              true,
		"/m/b/...":                true,
		"/n/...":                  false,
		"example.com/m/a":         true,
		"example.com/m/...":       true,
		"example.com/m/b/...":     true,
		"example.com/m/svc_...":   true,
		"example.com/m/.../c":     true,
		"example.com/m/other_...": false,
		"example.com/n/...":       false,
		"all":                     true,
	} {
		assert.Equal(t, want, matchesAny(dir, filepath.FromSlash(pattern), list), pattern)
	}
}

// TestLocalDirs: the directories with Go files that a local pattern names
// are those the go command lists for it, the go.mod's ignore directives
// (Go 1.25) included: "./gen" leaves out the tree at the module's root,
// "node_modules" every tree of that name, from "..." patterns only.
func TestLocalDirs(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"go.mod", "svc_a/a.go", "svc_b/b.go", "svc_b/sub/s.go", "svc/s.go", "other/o.go",
		"x/api/api.go", "x/y/api/api.go", "vendor/v.go", "x/vendor/v/v.go",
		"svc_c/testdata/t.go", "svc_c/_skip/s.go", "svc_c/.hidden/h.go", "svc_c/c.go",
		"svc_d/nested/go.mod", "svc_d/nested/n.go", "svc_d/d.go",
		"gen/g.go", "gen/sub/s.go", "x/gen/g.go", "node_modules/n.go", "x/node_modules/m/m.go",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		src := "package " + strings.TrimSuffix(filepath.Base(name), ".go") + "\n"
		if name == "go.mod" || strings.HasSuffix(name, "/go.mod") {
			src = "module example.com/" + strings.TrimSuffix("m/"+name, "/go.mod") + "\n\ngo 1.25.0\n"
		}
		if name == "go.mod" {
			src += "\nignore ./gen\nignore node_modules\n"
		}
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	for _, pattern := range []string{"./...", "./svc_...", "./svc_b...", "./.../api", "./x/...", "./vendor/...", "./svc_c/...", "./svc_d/...", dir + "/svc_...", "./svc",
		"./gen/...", "./gen/sub/...", "./gen", "./x/gen/...", "./node_modules/...", "./x/node_modules/...", "./x/node_modules/m", dir + "/x/..."} {
		pattern = filepath.FromSlash(pattern)
		dirs, ok := localDirs(dir, []string{pattern})
		require.True(t, ok, pattern)
		var got []string
		for _, d := range dirs {
			if gofiles, _ := filepath.Glob(filepath.Join(d, "*.go")); len(gofiles) == 0 {
				continue // the go command lists only directories with Go files
			}
			r, err := filepath.Rel(dir, d)
			require.NoError(t, err)
			got = append(got, filepath.ToSlash(r))
		}
		cmd := exec.Command("go", "list", "-f", "{{.Dir}}", pattern)
		cmd.Dir, cmd.Env = dir, env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "go list %s: %s", pattern, stderr.String())
		var want []string
		for _, d := range strings.Fields(string(out)) {
			r, err := filepath.Rel(dir, d)
			require.NoError(t, err)
			want = append(want, filepath.ToSlash(r))
		}
		slices.Sort(got)
		slices.Sort(want)
		assert.Equal(t, want, got, pattern)
	}
	_, ok := localDirs(dir, []string{"./a", "example.com/m/..."})
	assert.False(t, ok, "an import path is not local")
}
