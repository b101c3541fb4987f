package model

import (
	"go/types"
	"strings"
)

// Walk calls fn for t and every type it is built from, stopping at named
// types and aliases (whose insides the wrapper never spells out) except for
// their type arguments.
func Walk(t types.Type, fn func(types.Type)) {
	fn(t)
	switch t := t.(type) {
	case *types.Alias:
		for a := range t.TypeArgs().Types() {
			Walk(a, fn)
		}
	case *types.Named:
		for a := range t.TypeArgs().Types() {
			Walk(a, fn)
		}
	case *types.Pointer:
		Walk(t.Elem(), fn)
	case *types.Slice:
		Walk(t.Elem(), fn)
	case *types.Array:
		Walk(t.Elem(), fn)
	case *types.Chan:
		Walk(t.Elem(), fn)
	case *types.Map:
		Walk(t.Key(), fn)
		Walk(t.Elem(), fn)
	case *types.Signature:
		for v := range t.Params().Variables() {
			Walk(v.Type(), fn)
		}
		for v := range t.Results().Variables() {
			Walk(v.Type(), fn)
		}
	case *types.Struct:
		for f := range t.Fields() {
			Walk(f.Type(), fn)
		}
	case *types.Interface:
		for m := range t.ExplicitMethods() {
			Walk(m.Type(), fn)
		}
		for e := range t.EmbeddedTypes() {
			Walk(e, fn)
		}
	case *types.Union:
		for i := range t.Len() {
			Walk(t.Term(i).Type(), fn)
		}
	}
}

// foreignUnexported names the first part of t that is unexported in
// another package than pkg (a type, an anonymous struct's field or an
// anonymous interface's method: pkg cannot spell any of them), or returns "".
func foreignUnexported(t types.Type, pkg *types.Package) string {
	bad := ""
	foreign := func(o types.Object) bool {
		return bad == "" && o.Pkg() != nil && o.Pkg() != pkg && !o.Exported()
	}
	Walk(t, func(t types.Type) {
		switch t := t.(type) {
		case *types.Struct:
			for f := range t.Fields() {
				if foreign(f) {
					bad = "the field " + f.Name() + " of a struct type from " + f.Pkg().Path()
				}
			}
		case *types.Interface:
			for m := range t.ExplicitMethods() {
				if foreign(m) {
					bad = "the method " + m.Name() + " of an interface type from " + m.Pkg().Path()
				}
			}
		default:
			if obj := TypeName(t); obj != nil && foreign(obj) {
				bad = obj.Pkg().Path() + "." + obj.Name()
			}
		}
	})
	return bad
}

// foreignInternal names the first type of t that pkg cannot spell because
// it is declared in an internal package pkg may not import (an embedded
// interface of another module whose methods use its internal types), or
// returns "". An alias is spelled as itself (its target is not looked at).
func foreignInternal(t types.Type, pkg *types.Package) string {
	bad := ""
	Walk(t, func(t types.Type) {
		if obj := TypeName(t); bad == "" && obj != nil && obj.Pkg() != nil && obj.Pkg() != pkg && !importable(pkg.Path(), obj.Pkg().Path()) {
			bad = obj.Pkg().Path() + "." + obj.Name()
		}
	})
	return bad
}

// importable reports whether the package at path from may import the
// package at path to by Go's rule for internal packages: a path with an
// element internal is importable only from within the tree rooted at the
// parent of its last such element (an internal at the root, only from the
// standard library). An external test package (path_test) imports as its
// package does.
func importable(from, to string) bool {
	var parent string
	switch {
	case strings.HasSuffix(to, "/internal"):
		parent = strings.TrimSuffix(to, "/internal")
	case strings.Contains(to, "/internal/"):
		parent = to[:strings.LastIndex(to, "/internal/")]
	case to == "internal" || strings.HasPrefix(to, "internal/"):
		first, _, _ := strings.Cut(from, "/")
		return !strings.Contains(first, ".") // the standard library's
	default:
		return true
	}
	from = strings.TrimSuffix(from, "_test")
	return from == parent || strings.HasPrefix(from, parent+"/")
}

// invalid reports whether t contains an invalid type (from type errors).
func invalid(t types.Type) bool {
	bad := false
	Walk(t, func(t types.Type) {
		if b, ok := t.(*types.Basic); ok && b.Kind() == types.Invalid {
			bad = true
		}
	})
	return bad
}

// TypeName returns the name of t when t is a named type or an alias, and
// nil otherwise.
func TypeName(t types.Type) *types.TypeName {
	switch t := t.(type) {
	case *types.Alias:
		return t.Obj()
	case *types.Named:
		return t.Obj()
	}
	return nil
}
