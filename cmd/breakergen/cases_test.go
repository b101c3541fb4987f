package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCaseNumbering: the NN_* golden cases follow the numbered pitfalls
// of testdata/README.md, one case per number, with no number missing, and
// the README lists each under its number.
func TestCaseNumbering(t *testing.T) {
	files, err := filepath.Glob(fixtures + "/cases/[0-9][0-9]_*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	readme, err := os.ReadFile(fixtures + "/README.md")
	require.NoError(t, err)
	byNumber := map[int]string{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		n, _ := strconv.Atoi(name[:2])
		if prev, ok := byNumber[n]; ok {
			t.Errorf("item %d has two cases: %s and %s", n, prev, name)
		}
		byNumber[n] = name
		row := regexp.MustCompile(`(?m)^\| ` + strconv.Itoa(n) + ` \|.*\| ` + "`" + name + "`" + ` \|$`)
		assert.Regexp(t, row, string(readme), "testdata/README.md does not list %s under item %d", name, n)
	}
	for n := 1; n <= len(byNumber); n++ {
		assert.Contains(t, byNumber, n, "no case for item %d", n)
	}
}
