package load

import (
	"go/ast"
	"go/build/constraint"
	"strings"
)

// BuildLine returns the build constraint of f as a //go:build line, or "".
// A //go:build line is returned as it is. A file constrained only by
// legacy // +build lines, which the go command still obeys, gets the
// equivalent //go:build line, as gofmt writes it: an output without one
// would build where its source does not, and fail to compile there.
//
// As for the go command, a //go:build line counts anywhere before the
// package clause, and // +build lines only in the file's header: the line
// comments before the last blank line that precedes the package clause,
// its doc comment and any /* */ comment. A malformed term reads as the tag
// "ignore", which builds nowhere, as the go command reads it.
func BuildLine(f *ast.File) string {
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				return c.Text
			}
		}
	}
	var x constraint.Expr
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package || cg == f.Doc || slashStar(cg) {
			break // no blank line follows it: the header has ended
		}
		for _, c := range cg.List {
			if !constraint.IsPlusBuild(c.Text) {
				continue
			}
			y, err := constraint.Parse(c.Text)
			switch {
			case err != nil: // the go command ignores it too
			case x == nil:
				x = y
			default:
				x = &constraint.AndExpr{X: x, Y: y} // every line must hold
			}
		}
	}
	if x == nil {
		return ""
	}
	return "//go:build " + x.String()
}

// slashStar reports whether cg holds a /* */ comment, which ends a file's
// header for the go command.
func slashStar(cg *ast.CommentGroup) bool {
	for _, c := range cg.List {
		if strings.HasPrefix(c.Text, "/*") {
			return true
		}
	}
	return false
}
