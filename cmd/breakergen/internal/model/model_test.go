package model

import (
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIdent(t *testing.T) {
	for name, want := range map[string]string{
		"eastmoney":     "eastmoney",
		"fallback:sina": "fallbackSina",
		"a-b.c_d":       "aBCD",
		"2fa":           "b2fa",
		"-":             "b",
	} {
		assert.Equal(t, want, ident(name), name)
	}
}

func TestParsePos(t *testing.T) {
	assert.Equal(t, token.Position{Filename: "/a/b.go", Line: 3, Column: 7}, parsePos("/a/b.go:3:7"))
	assert.Equal(t, token.Position{Filename: "c:/a.go", Line: 3}, parsePos("c:/a.go:3"))
	for _, s := range []string{"", "-"} {
		p := parsePos(s)
		assert.False(t, p.IsValid(), s)
	}
}

func TestImportable(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"example.com/b", "example.com/a/api", true},
		{"example.com/b", "example.com/a/internal/types", false},
		{"example.com/a", "example.com/a/internal/types", true},
		{"example.com/a/api/v2", "example.com/a/internal/types", true},
		{"example.com/ab", "example.com/a/internal/types", false}, // a prefix, not a parent
		{"example.com/a_test", "example.com/a/internal/types", true},
		{"example.com/a", "example.com/a/internal", true},
		{"example.com/b", "example.com/a/internal", false},
		// The last internal element decides.
		{"example.com/a/x", "example.com/a/internal/t/internal/u", false},
		{"example.com/a/internal/t/y", "example.com/a/internal/t/internal/u", true},
		// An internal at the root: the standard library's.
		{"net/http", "internal/abi", true},
		{"example.com/b", "internal/abi", false},
		{"example.com/b", "example.com/internals/x", true},
	} {
		assert.Equal(t, c.want, importable(c.from, c.to), "%s imports %s", c.from, c.to)
	}
}

// TestTopLevelNames: the names a file declares in its package's scope, and
// none of its methods, init, blanks, fields or locals.
func TestTopLevelNames(t *testing.T) {
	src := `package x

import "fmt"

type (
	A struct{ B int }
	c = int
)

var D, _, e = 1, 2, 3

const F = 1

func G() { var H int; _ = H }

func (A) I() {}

func init() {}

func _() {}

var _ = fmt.Sprint
`
	f, err := parser.ParseFile(token.NewFileSet(), "x_test.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	var got []string
	for _, id := range topLevelNames(f) {
		got = append(got, id.Name)
	}
	assert.Equal(t, []string{"A", "c", "D", "e", "F", "G"}, got)
}
