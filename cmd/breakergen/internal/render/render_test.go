package render

import (
	"testing"
	"time"

	"github.com/dave/jennifer/jen"
	"github.com/stretchr/testify/assert"
)

func TestImportNames(t *testing.T) {
	im := newImports(map[string]bool{"context": true})
	assert.Equal(t, "template", im.add("html/template", "template"))
	assert.Equal(t, "texttemplate", im.add("text/template", "template"))
	assert.Equal(t, "rand", im.add("math/rand", "rand"))
	assert.Equal(t, "randv2", im.add("math/rand/v2", "rand"))
	assert.Equal(t, "yaml", im.add("gopkg.in/yaml.v3", "yaml"))
	assert.Equal(t, "contextpkg", im.add("context", "context"))
	assert.Equal(t, "runtime", im.add("runtime", "runtime"))
	assert.Equal(t, "breakergenruntime", im.add(RuntimePath, "runtime"))
	assert.Equal(t, "template", im.add("html/template", "template"), "stable")
	// Names that cannot be imports.
	im2 := newImports(nil)
	assert.Equal(t, "stringpkg", im2.add("example.com/string", "string"))
}

func TestDuration(t *testing.T) {
	g := &gen{}
	for d, want := range map[time.Duration]string{
		time.Hour:               "time.Hour",
		90 * time.Minute:        "90 * time.Minute",
		30 * time.Second:        "30 * time.Second",
		1500 * time.Millisecond: "1500 * time.Millisecond",
		time.Microsecond:        "time.Microsecond",
		7:                       "7 * time.Nanosecond",
	} {
		assert.Equal(t, want, jen.Add(g.duration(d)).GoString(), d.String())
	}
}

func TestWrap(t *testing.T) {
	lines := wrap("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen")
	for _, l := range lines {
		assert.LessOrEqual(t, len(l), 76)
	}
	assert.Len(t, lines, 2)
}

func TestGroupImports(t *testing.T) {
	src := "package x\n\nimport (\n\t\"context\"\n\t\"example.com/y\"\n\t\"time\"\n)\n"
	assert.Equal(t, "package x\n\nimport (\n\t\"context\"\n\t\"time\"\n\n\t\"example.com/y\"\n)\n", string(groupImports([]byte(src))))
	only := "package x\n\nimport (\n\t\"context\"\n\t\"time\"\n)\n"
	assert.Equal(t, only, string(groupImports([]byte(only))))
}
