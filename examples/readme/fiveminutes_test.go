package readme_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/internal/gotest"
)

// TestFiveMinutes runs the README's "Five minutes" steps as they are
// written, read from README.md when the test runs: in a new module it runs
// the install recipe for a clone (the <!-- install: clone --> block, with
// this checkout for the README's clone in ../breakergen), writes
// the <!-- file: NAME --> blocks and runs the shell blocks in order; then
// it checks that the require of the runtime is direct and runs a test of
// its own (testdata/check_test.go.txt) against the generated wrapper. The
// go command gets the machine's go environment (module cache, proxy,
// GOFLAGS), so a warm cache needs no network.
func TestFiveMinutes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command; skipped with -short")
	}
	script := fiveMinutesScript(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "five_minutes.txtar"), txtar.Format(script), 0o644))
	goenv, err := gotest.Env()
	require.NoError(t, err)
	repo, err := filepath.Abs(root)
	require.NoError(t, err)
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			for k, v := range goenv {
				env.Setenv(k, v)
			}
			env.Setenv("GOWORK", "off")
			env.Setenv("REPO", repo)
			return nil
		},
	})
}

// fiveMinutesScript makes the script from the README.
func fiveMinutesScript(t *testing.T) *txtar.Archive {
	var install *block
	var steps []block
	for _, b := range readmeBlocks(t) {
		switch {
		case b.source == "install: clone":
			install = &b
		case strings.HasPrefix(b.section, "Five minutes"):
			steps = append(steps, b)
		}
	}
	require.NotNil(t, install, "README.md has no <!-- install: clone --> block")
	require.NotEmpty(t, steps, "README.md has no \"Five minutes\" section")

	var sb strings.Builder
	sb.WriteString("cd quotes\n\n")
	run := func(b block, replace func(string) string) {
		fmt.Fprintf(&sb, "# %s\n", b.where())
		for _, cmd := range shellCommands(b.text) {
			fmt.Fprintf(&sb, "exec %s\n", replace(cmd))
		}
		sb.WriteString("\n")
	}
	// The clone is this checkout. (A link ../breakergen would do too, but
	// the build cache keys the tool's packages by their directory: a new
	// one each run would compile them again.)
	const clone = "=../breakergen"
	require.Contains(t, install.text, clone, "%s: the clone recipe no longer replaces with %s", install.where(), clone)
	run(*install, func(cmd string) string { return strings.ReplaceAll(cmd, clone, "=$REPO") })
	ar := &txtar.Archive{Files: []txtar.File{{Name: "quotes/go.mod", Data: []byte("module example.com/quotes\n\ngo 1.25.0\n")}}}
	var files, cmds int
	for _, b := range steps {
		switch {
		case strings.HasPrefix(b.source, "file: "):
			ar.Files = append(ar.Files, txtar.File{Name: "quotes/" + strings.TrimPrefix(b.source, "file: "), Data: []byte(b.text)})
			files++
		case b.lang == "sh":
			run(b, func(cmd string) string { return cmd })
			cmds++
		default:
			t.Fatalf("%s: a %q block in \"Five minutes\" is neither a file nor commands", b.where(), b.lang)
		}
	}
	require.NotZero(t, files, "\"Five minutes\" writes no file")
	require.NotZero(t, cmds, "\"Five minutes\" runs no command")
	sb.WriteString(`# The steps leave the runtime required directly, not // indirect.
grep '^require github.com/breakergen/breakergen v\S+$' go.mod
! grep 'github.com/breakergen/breakergen v\S+ // indirect' go.mod

# The wrapper does what the README says of it.
cp ../check_test.go.txt check_test.go
exec go test ./...
`)
	check, err := os.ReadFile("testdata/check_test.go.txt")
	require.NoError(t, err)
	ar.Comment = []byte(sb.String())
	ar.Files = append(ar.Files, txtar.File{Name: "check_test.go.txt", Data: check})
	return ar
}
