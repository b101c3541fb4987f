package render

import (
	"go/types"
	"strings"

	"github.com/dave/jennifer/jen"
)

// typer renders go/types types as jennifer code, qualified for the
// destination package. Aliases render by their own name.
type typer struct {
	local *types.Package
}

func (tr typer) qual(obj *types.TypeName) *jen.Statement {
	if obj.Pkg() == nil || obj.Pkg().Path() == tr.local.Path() {
		return jen.Id(obj.Name())
	}
	return jen.Qual(obj.Pkg().Path(), obj.Name())
}

func (tr typer) list(l *types.TypeList) []jen.Code {
	var out []jen.Code
	for t := range l.Types() {
		out = append(out, tr.typ(t))
	}
	return out
}

func (tr typer) typ(t types.Type) jen.Code {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return jen.Qual("unsafe", "Pointer")
		}
		return jen.Id(t.Name())
	case *types.Alias:
		s := tr.qual(t.Obj())
		if t.TypeArgs().Len() > 0 {
			s = s.Types(tr.list(t.TypeArgs())...)
		}
		return s
	case *types.Named:
		s := tr.qual(t.Obj())
		if t.TypeArgs().Len() > 0 {
			s = s.Types(tr.list(t.TypeArgs())...)
		}
		return s
	case *types.TypeParam:
		return jen.Id(t.Obj().Name())
	case *types.Pointer:
		return jen.Op("*").Add(tr.typ(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(tr.typ(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(tr.typ(t.Elem()))
	case *types.Map:
		return jen.Map(tr.typ(t.Key())).Add(tr.typ(t.Elem()))
	case *types.Chan:
		elem := tr.typ(t.Elem())
		// chan (<-chan T): a receive-only channel as the element of a
		// bidirectional channel needs parentheses.
		if ec, ok := t.Elem().(*types.Chan); ok && t.Dir() == types.SendRecv && ec.Dir() == types.RecvOnly {
			elem = jen.Parens(elem)
		}
		switch t.Dir() {
		case types.SendOnly:
			return jen.Chan().Op("<-").Add(elem)
		case types.RecvOnly:
			return jen.Op("<-").Chan().Add(elem)
		}
		return jen.Chan().Add(elem)
	case *types.Signature:
		return jen.Func().Add(tr.signature(t))
	case *types.Struct:
		var fields []jen.Code
		for i := range t.NumFields() {
			f := t.Field(i)
			var c *jen.Statement
			if f.Embedded() {
				c = jen.Add(tr.typ(f.Type()))
			} else {
				c = jen.Id(f.Name()).Add(tr.typ(f.Type()))
			}
			if tag := t.Tag(i); tag != "" {
				if strings.Contains(tag, "`") {
					c = c.Lit(tag)
				} else {
					c = c.Op("`" + tag + "`")
				}
			}
			fields = append(fields, c)
		}
		return jen.Struct(fields...)
	case *types.Interface:
		return tr.iface(t)
	case *types.Union:
		var terms []jen.Code
		for i := range t.Len() {
			term := t.Term(i)
			if term.Tilde() {
				terms = append(terms, jen.Op("~").Add(tr.typ(term.Type())))
			} else {
				terms = append(terms, tr.typ(term.Type()))
			}
		}
		return jen.Union(terms...)
	case *types.Tuple:
		panic("render: tuple as a type")
	}
	return jen.Id(types.TypeString(t, types.RelativeTo(tr.local)))
}

// constraint renders a type parameter's constraint, unwrapping an implicit
// interface (the ~int | string of [T ~int | string]).
func (tr typer) constraint(t types.Type) jen.Code {
	if it, ok := t.(*types.Interface); ok && it.IsImplicit() && it.NumEmbeddeds() == 1 {
		return tr.typ(it.EmbeddedType(0))
	}
	return tr.typ(t)
}

func (tr typer) iface(t *types.Interface) jen.Code {
	if t.Empty() {
		return jen.Interface()
	}
	var items []jen.Code
	for e := range t.EmbeddedTypes() {
		items = append(items, tr.typ(e))
	}
	for m := range t.ExplicitMethods() {
		items = append(items, jen.Id(m.Name()).Add(tr.signature(m.Type().(*types.Signature))))
	}
	return jen.Interface(items...)
}

// signature renders (params) results of a func type, keeping the names.
func (tr typer) signature(sig *types.Signature) *jen.Statement {
	var params []jen.Code
	n := sig.Params().Len()
	for i := range n {
		v := sig.Params().At(i)
		s := jen.Null()
		if v.Name() != "" {
			s = jen.Id(v.Name())
		}
		if sig.Variadic() && i == n-1 {
			s = s.Op("...").Add(tr.typ(v.Type().(*types.Slice).Elem()))
		} else {
			s = s.Add(tr.typ(v.Type()))
		}
		params = append(params, s)
	}
	return jen.Params(params...).Add(tr.results(sig.Results(), nil))
}

// results renders a result list; names, if not nil, names each result
// ("" for none).
func (tr typer) results(r *types.Tuple, names []string) jen.Code {
	name := func(i int) string { return resultName(r, names, i) }
	switch {
	case r.Len() == 0:
		return jen.Null()
	case r.Len() == 1 && name(0) == "":
		return tr.typ(r.At(0).Type())
	}
	var out []jen.Code
	for i := range r.Len() {
		v := r.At(i)
		if name := name(i); name != "" {
			out = append(out, jen.Id(name).Add(tr.typ(v.Type())))
		} else {
			out = append(out, tr.typ(v.Type()))
		}
	}
	return jen.Params(out...)
}

// resultName is the name of result i of r in a result list: names[i], or
// with names nil the result's own name ("" for none).
func resultName(r *types.Tuple, names []string, i int) string {
	if names != nil {
		return names[i]
	}
	return r.At(i).Name()
}

// errorResultNames names the results of an unguarded method whose last
// result is an error, so that it can report a nil wrapped value: "_" for
// each result but the error, a fresh err for it. ok is false when the last
// result is not an error.
func errorResultNames(res *types.Tuple, a *alloc) (names []string, err string, ok bool) {
	n := res.Len()
	if n == 0 || !types.Identical(res.At(n-1).Type(), types.Universe.Lookup("error").Type()) {
		return nil, "", false
	}
	err = a.fresh("err")
	names = make([]string, n)
	for i := range names {
		names[i] = "_"
	}
	names[n-1] = err
	return names, err, true
}
