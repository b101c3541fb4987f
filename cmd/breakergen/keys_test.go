package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
)

// TestKeyTables holds the manual (doc.go) and the README to the one table
// of annotation keys (annotation.Keys): their key tables must be the
// table's renderings, and the prose of the manual and of
// docs/annotations.md must list the keys of a name and the keys not
// supported yet as the table does. -update rewrites the two
// tables; the prose is edited by hand. The usage text (-h) and the
// did-you-mean hints are made from the table at run time.
func TestKeyTables(t *testing.T) {
	var manual []string
	for _, l := range annotation.ManualTable() {
		manual = append(manual, strings.TrimRight("//\t"+l, "\t"))
	}
	checkBlock(t, "doc.go", "//\tkey ", "//\t", manual)
	readme := filepath.Join(repoRoot(), "README.md")
	checkBlock(t, readme, "| key | value | meaning | default |", "|",
		strings.Split(strings.TrimSuffix(annotation.MarkdownTable(), "\n"), "\n"))

	var nameKeys, quoted []string
	for _, k := range annotation.Keys() {
		if k.Scope == annotation.NameScope {
			nameKeys = append(nameKeys, k.Name)
			quoted = append(quoted, "`"+k.Name+"`")
		}
	}
	doc, md := prose(t, "doc.go"), prose(t, filepath.Join(repoRoot(), "docs", "annotations.md"))
	for _, c := range []struct{ file, text, want string }{
		{"doc.go", doc, list(nameKeys) + " belong to the name"},
		{"docs/annotations.md", md, list(quoted) + " belong to the *name*"},
	} {
		assert.True(t, strings.Contains(c.text, c.want), "%s does not say %q", c.file, c.want)
	}
	if notYet := annotation.NotYet(); len(notYet) > 0 {
		want := "The keys " + list(notYet) + " are reserved"
		assert.True(t, strings.Contains(doc, want), "doc.go does not say %q", want)
	}
}

// checkBlock compares the block of file that starts with the line start
// and goes on while lines start with cont against want, and rewrites it
// with -update.
func checkBlock(t *testing.T, file, start, cont string, want []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], start) {
		i++
	}
	require.Less(t, i, len(lines), "%s: no line starts with %q", file, start)
	j := i + 1
	for j < len(lines) && strings.HasPrefix(lines[j], cont) {
		j++
	}
	got := lines[i:j]
	if *update && strings.Join(got, "\n") != strings.Join(want, "\n") {
		out := append(append(append([]string{}, lines[:i]...), want...), lines[j:]...)
		require.NoError(t, os.WriteFile(file, []byte(strings.Join(out, "\n")), 0o644))
		return
	}
	assert.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"),
		"%s:%d: the key table differs from annotation.Keys (go test ./cmd/breakergen -run TestKeyTables -update rewrites it)", file, i+1)
}

// prose returns the text of file with comment markers dropped and every
// run of white space folded to one space, so that a sentence can be found
// across wrapped lines.
func prose(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	return strings.Join(strings.Fields(strings.ReplaceAll(string(data), "\n//", "\n")), " ")
}

// list joins words as English does: "a, b and c".
func list(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
