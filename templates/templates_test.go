package templates_test

import (
	"html/template"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/templates"
)

func TestFS(t *testing.T) {
	names, err := fs.Glob(templates.FS, "*")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"dashboard.css", "dashboard.html", "dashboard.js"}, names)

	_, err = template.ParseFS(templates.FS, "dashboard.html")
	require.NoError(t, err)
}

// TestDashboardScript guards the script's promises: nothing fetched from
// elsewhere, and text set as text, never parsed as HTML.
func TestDashboardScript(t *testing.T) {
	b, err := templates.FS.ReadFile("dashboard.js")
	require.NoError(t, err)
	js := string(b)
	for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
		"http:", "https:", "//cdn", "import(", "new Function"} {
		assert.NotContains(t, js, banned)
	}
	assert.Contains(t, js, `getJSON("datasources"`, "relative URLs, so the page works under any prefix")
	assert.True(t, strings.HasPrefix(js, "(() => {"), "one closure: no globals")
}
