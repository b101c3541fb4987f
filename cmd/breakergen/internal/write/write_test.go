package write

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
)

const ours = load.Header + "\n\npackage x\n"

func TestPlanAndApply(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	files := map[string]string{
		"same.go":                 "package x\n",
		"same_breaker.go":         ours + "// same\n",
		"changed.go":              "package x\n",
		"changed_breaker.go":      ours + "// old\n",
		"gone_breaker.go":         ours, // its source is gone
		"unscanned.go":            "package x\n",
		"unscanned_breaker.go":    ours, // its source was not loaded (build tags)
		"dropped.go":              "package x\n",
		"dropped_breaker_test.go": ours,
	}
	for n, c := range files {
		require.NoError(t, os.WriteFile(p(n), []byte(c), 0o644))
	}
	outputs := map[string][]byte{
		p("same_breaker.go"):    []byte(ours + "// same\n"),
		p("changed_breaker.go"): []byte(ours + "// new\n"),
		p("new_breaker.go"):     []byte(ours + "// new file\n"),
	}
	existing := map[string]bool{p("same_breaker.go"): true, p("changed_breaker.go"): true, p("gone_breaker.go"): true, p("unscanned_breaker.go"): true, p("dropped_breaker_test.go"): true}
	sources := map[string]bool{p("same.go"): true, p("changed.go"): true, p("dropped_test.go"): true}
	require.NoError(t, os.WriteFile(p("dropped_test.go"), []byte("package x\n"), 0o644))

	changes, blocked, err := Plan(outputs, existing, sources, false)
	require.NoError(t, err)
	assert.Empty(t, blocked)
	var got []string
	for _, c := range changes {
		verb := "write "
		if c.Remove {
			verb = "remove "
		}
		got = append(got, verb+filepath.Base(c.Path))
	}
	assert.Equal(t, []string{"write changed_breaker.go", "remove dropped_breaker_test.go", "remove gone_breaker.go", "write new_breaker.go"}, got)

	keep, _, err := Plan(outputs, existing, sources, true)
	require.NoError(t, err)
	assert.Len(t, keep, 2, "a -type run removes nothing")

	info, _ := os.Stat(p("same_breaker.go"))
	require.NoError(t, Apply(changes))
	after, _ := os.Stat(p("same_breaker.go"))
	assert.Equal(t, info.ModTime(), after.ModTime(), "unchanged file rewritten")
	b, err := os.ReadFile(p("changed_breaker.go"))
	require.NoError(t, err)
	assert.Equal(t, ours+"// new\n", string(b))
	assert.NoFileExists(t, p("gone_breaker.go"))
	assert.NoFileExists(t, p("dropped_breaker_test.go"))
	assert.FileExists(t, p("unscanned_breaker.go"))
	assert.FileExists(t, p("new_breaker.go"))
	left, _ := filepath.Glob(filepath.Join(dir, ".breakergen-*"))
	assert.Empty(t, left, "temporary files left behind")
}

// TestPlanBlocked: a file breakergen did not write is never overwritten;
// every output such a file is in the way of is reported, beside the
// changes the others need.
func TestPlanBlocked(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, n := range []string{"a_breaker.go", "b_breaker.go"} {
		require.NoError(t, os.WriteFile(p(n), []byte("// hand-written\npackage x\n"), 0o644))
	}
	outputs := map[string][]byte{p("a_breaker.go"): []byte(ours), p("b_breaker.go"): []byte(ours), p("c_breaker.go"): []byte(ours)}
	changes, blocked, err := Plan(outputs, nil, nil, false)
	require.NoError(t, err)
	assert.Equal(t, []string{p("a_breaker.go"), p("b_breaker.go")}, blocked)
	assert.Equal(t, []Change{{Path: p("c_breaker.go"), Data: []byte(ours)}}, changes)
}

// crlf gives s the line endings git's core.autocrlf checks text files out
// with on Windows.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// TestPlanCRLF: an output that differs from its rendering only in "\r\n"
// line endings is up to date; one that differs in more is rewritten, with
// "\n" line endings.
func TestPlanCRLF(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	require.NoError(t, os.WriteFile(p("same_breaker.go"), []byte(crlf(ours+"// same\n")), 0o644))
	require.NoError(t, os.WriteFile(p("changed_breaker.go"), []byte(crlf(ours+"// old\n")), 0o644))
	outputs := map[string][]byte{
		p("same_breaker.go"):    []byte(ours + "// same\n"),
		p("changed_breaker.go"): []byte(ours + "// new\n"),
	}
	existing := map[string]bool{p("same_breaker.go"): true, p("changed_breaker.go"): true}
	changes, blocked, err := Plan(outputs, existing, nil, false)
	require.NoError(t, err)
	assert.Empty(t, blocked, "a CRLF output is ours")
	assert.Equal(t, []Change{{Path: p("changed_breaker.go"), Data: []byte(ours + "// new\n")}}, changes)
}

// TestEmptiedCRLF: an emptied output checked out with "\r\n" line endings
// is still one (go generate and -check leave it), and emptying one gives
// "\n" line endings.
func TestEmptiedCRLF(t *testing.T) {
	old := load.Header + "\n\n//go:build linux\n\npackage x\n\nfunc f() {}\n"
	e, ok := Emptied([]byte(crlf(old)))
	require.True(t, ok)
	want, _ := Emptied([]byte(old))
	assert.Equal(t, string(want), string(e))
	assert.True(t, IsEmptied(e))
	assert.True(t, IsEmptied([]byte(crlf(string(e)))))
	assert.False(t, IsEmptied([]byte(crlf(old))))
}
