package load

import (
	"go/ast"
	"strings"
)

// BuildLine returns the //go:build line of f, or "".
func BuildLine(f *ast.File) string {
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build ") {
				return c.Text
			}
		}
	}
	return ""
}
