package model

import (
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
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

// TestTypeErrors: go/types reports an error's second line as an error of
// its own, right after the first, indented with a tab; it joins the first,
// as the go command prints the pair.
func TestTypeErrors(t *testing.T) {
	p := &packages.Package{Errors: []packages.Error{
		{Pos: "/m/b.go:3:6", Msg: "S redeclared in this block", Kind: packages.TypeError},
		{Pos: "/m/a.go:6:6", Msg: "\tother declaration of S", Kind: packages.TypeError},
		{Pos: "/m/c.go:1:1", Msg: "c.go: no such file", Kind: packages.ListError},
		{Pos: "/m/a.go:12:2", Msg: "duplicate method Get", Kind: packages.TypeError},
		{Pos: "/m/a.go:11:2", Msg: "\tother declaration of method Get", Kind: packages.TypeError},
		{Pos: "/m/a.go:20:2", Msg: "undefined: x", Kind: packages.TypeError},
	}}
	var got []string
	for _, te := range typeErrors(p) {
		got = append(got, joinTypeError(te).Error())
	}
	assert.Equal(t, []string{
		"/m/b.go:3:6: S redeclared in this block\n\t/m/a.go:6:6: other declaration of S",
		"/m/a.go:12:2: duplicate method Get\n\t/m/a.go:11:2: other declaration of method Get",
		"/m/a.go:20:2: undefined: x",
	}, got)
}
