package readme_test

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pending are pages the README's map links to that another branch writes:
// a missing one is allowed, one that exists is checked like any other.
var pending = map[string]bool{"docs/health.md": true}

// TestDocLinks: every relative link of the README and of docs/*.md names a
// file of the repository, and every #anchor of a link to a Markdown page
// names one of that page's headings (as GitHub makes anchors from them),
// so that moving a section cannot leave a link pointing nowhere.
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	headings := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		data, err := os.ReadFile(filepath.Join(root, page))
		require.NoError(t, err)
		a := map[string]bool{}
		fence := false
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " "), "```") {
				fence = !fence
			}
			if h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " "); ok && !fence && strings.HasPrefix(l, "#") {
				a[slug(h)] = true
			}
		}
		anchors[page] = a
		return a
	}
	checked := 0
	for _, page := range pages(t) {
		data, err := os.ReadFile(filepath.Join(root, page))
		require.NoError(t, err)
		for i, l := range strings.Split(string(data), "\n") {
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				where := fmt.Sprintf("%s:%d", page, i+1)
				if file == "" {
					file = page
				} else {
					file = path.Clean(path.Join(path.Dir(page), file))
				}
				if _, err := os.Stat(filepath.Join(root, file)); err != nil {
					assert.True(t, pending[file], "%s: %s: no such file %s", where, target, file)
					continue
				}
				checked++
				if anchor != "" && strings.HasSuffix(file, ".md") {
					assert.True(t, headings(file)[anchor], "%s: %s: %s has no heading #%s", where, target, file, anchor)
				}
			}
		}
	}
	assert.NotZero(t, checked)
}

// slug is GitHub's anchor of a heading: lower case, spaces as hyphens,
// punctuation other than - and _ dropped.
func slug(h string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			sb.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
