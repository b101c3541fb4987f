package model

import (
	"go/ast"
	"go/token"
	"strings"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
)

// unread warns about the //breaker: lines of f in comments no step read:
// a line separated from its type or method by a blank line (the comment is
// then no doc comment), or one in a comment that documents nothing an
// annotation can be on (a struct field, a statement, the end of a block).
func (b *builder) unread(f *ast.File) {
	for _, cg := range f.Comments {
		if b.scanned[cg] {
			continue
		}
		for _, c := range cg.List {
			if !strings.HasPrefix(c.Text, annotation.Prefix) {
				continue
			}
			pos := b.fset.Position(c.Slash)
			if what := detachedFrom(b.fset, f, cg); what != "" {
				b.warnf(pos, "this //breaker: line is separated from %s below it by a blank line, so it annotates nothing; remove the blank line: an annotation must be in the doc comment right above", what)
			} else {
				b.warnf(pos, "this //breaker: line annotates nothing: an annotation must be in the doc comment right above an interface type, or above a method inside one")
			}
		}
	}
}

// detachedFrom names the declaration (a type, or a method inside an
// interface) that cg, a comment documenting nothing, sits above with blank
// lines and nothing but that declaration's own doc comment between; "" if
// none.
func detachedFrom(fset *token.FileSet, f *ast.File, cg *ast.CommentGroup) string {
	// between reports whether a comment other than doc lies between cg and
	// pos: then cg is not about what starts at pos.
	between := func(pos token.Pos, doc *ast.CommentGroup) bool {
		for _, o := range f.Comments {
			if o != cg && o != doc && o.Pos() > cg.End() && o.End() < pos {
				return true
			}
		}
		return false
	}
	var next ast.Node // the first declaration, spec or method after cg
	var doc *ast.CommentGroup
	var what string
	consider := func(n ast.Node, d *ast.CommentGroup, w string) {
		if n.Pos() > cg.End() && (next == nil || n.Pos() < next.Pos()) {
			next, doc, what = n, d, w
		}
	}
	for _, d := range f.Decls {
		if d.Pos() <= cg.Pos() && cg.End() <= d.End() {
			// cg is inside d: only a type declaration has something
			// below it an annotation can be on.
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				return ""
			}
			next = nil
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				if ts.Pos() > cg.End() {
					consider(ts, ts.Doc, "the type "+ts.Name.Name)
					continue
				}
				if ts.End() < cg.Pos() {
					continue
				}
				it, ok := ts.Type.(*ast.InterfaceType)
				if !ok || it.Methods == nil {
					return "" // in a struct, or a type's parameters
				}
				for _, m := range it.Methods.List {
					if len(m.Names) > 0 {
						consider(m, m.Doc, "the method "+ts.Name.Name+"."+m.Names[0].Name)
					}
				}
				break
			}
			break
		}
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE && !gd.Lparen.IsValid() && len(gd.Specs) == 1 {
			consider(gd, gd.Doc, "the type "+gd.Specs[0].(*ast.TypeSpec).Name.Name)
		} else {
			consider(d, nil, "")
		}
	}
	if next == nil || what == "" || between(next.Pos(), doc) {
		return ""
	}
	start := next.Pos()
	if doc != nil {
		start = doc.Pos()
	}
	if fset.Position(start).Line <= fset.Position(cg.End()).Line+1 {
		return "" // no blank line between: cg ends a line of code ({ //breaker:...)
	}
	return what
}
