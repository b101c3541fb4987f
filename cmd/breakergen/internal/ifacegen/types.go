package ifacegen

import (
	"strconv"
	"strings"
)

// pkg is a package a type or an interface comes from.
type pkg struct {
	path, name string
}

// The standard library packages the generated code may use.
var (
	pContext  = &pkg{"context", "context"}
	pTime     = &pkg{"time", "time"}
	pHTTP     = &pkg{"net/http", "http"}
	pHTTPTest = &pkg{"net/http/httptest", "httptest"}
	pTText    = &pkg{"text/template", "template"}
	pTHTML    = &pkg{"html/template", "template"}
	pRand     = &pkg{"math/rand", "rand"}
	pRandV2   = &pkg{"math/rand/v2", "rand"}
	pRuntime  = &pkg{"runtime", "runtime"}
	pOS       = &pkg{"os", "os"}
	pFS       = &pkg{"io/fs", "fs"}
	pIO       = &pkg{"io", "io"}
	pFmt      = &pkg{"fmt", "fmt"}
	pErrors   = &pkg{"errors", "errors"}
	pSort     = &pkg{"sort", "sort"}
	pHeap     = &pkg{"container/heap", "heap"}
	pFlag     = &pkg{"flag", "flag"}
	pEncoding = &pkg{"encoding", "encoding"}
	pStrings  = &pkg{"strings", "strings"}
	pUnsafe   = &pkg{"unsafe", "unsafe"}
	pCmp      = &pkg{"cmp", "cmp"}
	pURL      = &pkg{"net/url", "url"}
	pSlog     = &pkg{"log/slog", "slog"}
	pReflect  = &pkg{"reflect", "reflect"}
	pTesting  = &pkg{"testing", "testing"}
	pBGRun    = &pkg{"github.com/breakergen/breakergen/runtime", "runtime"}
)

// typ is a type expression. Types of generic declarations refer to their
// type parameters (tparamT); subst replaces them.
type typ interface{ isTyp() }

type (
	basicT struct{ name string }
	// namedT is a declared type, an alias or an interface, instantiated
	// with args when generic.
	namedT struct {
		d    *named
		args []typ
	}
	ptrT   struct{ elem typ }
	sliceT struct{ elem typ }
	arrayT struct {
		n    int
		elem typ
	}
	mapT  struct{ key, elem typ }
	chanT struct {
		dir  chanDir
		elem typ
	}
	funcT struct {
		params, results []typ
		variadic        bool
	}
	structT struct{ fields []field }
	tparamT struct{ p *tparam }
	// litT is an anonymous interface that *strings.Reader implements.
	litT struct{ withReader bool }
)

func (basicT) isTyp()  {}
func (namedT) isTyp()  {}
func (ptrT) isTyp()    {}
func (sliceT) isTyp()  {}
func (arrayT) isTyp()  {}
func (mapT) isTyp()    {}
func (chanT) isTyp()   {}
func (funcT) isTyp()   {}
func (structT) isTyp() {}
func (tparamT) isTyp() {}
func (litT) isTyp()    {}

type chanDir int

const (
	both chanDir = iota
	sendOnly
	recvOnly
)

type field struct {
	name     string
	t        typ
	tag      string
	embedded bool
}

// named is a declared type: local, in the module's other package, or in
// the standard library.
type named struct {
	pkg     *pkg // nil for error and any
	name    string
	tparams []*tparam
	alias   bool
	// under is the right-hand side of the declaration, in terms of
	// tparams (for an alias: its target); nil for the standard library's
	// types, which have val.
	under typ
	iface *iface // the interface, for interface types
	// val writes a value of the type (standard library types).
	val func(v *vctx, args []typ) string
	// declare writes the declaration, for types the fuzzer declares.
	declare func(f *file) string
	// stringer: a struct type with a String method (keys.go).
	stringer bool
}

// tparam is a type parameter with its constraint.
type tparam struct {
	name string
	cons *constraint
	// conc is the type argument the forwarding test instantiates with.
	conc typ
}

// constraint is a type parameter's constraint and a type argument that
// satisfies it.
type constraint struct {
	src  func(f *file, prev []*tparam) string
	conc func(g *gen, prev []*tparam) typ
	// keyable: the type argument may key a map.
	keyable bool
	// reader: the constraint has Read (io.Reader), so a result of the type
	// parameter's is read once (see mayRead).
	reader bool
}

// subst replaces type parameters by types.
func subst(t typ, m map[*tparam]typ) typ {
	if len(m) == 0 {
		return t
	}
	switch t := t.(type) {
	case tparamT:
		if r, ok := m[t.p]; ok {
			return r
		}
		return t
	case namedT:
		if len(t.args) == 0 {
			return t
		}
		args := make([]typ, len(t.args))
		for i, a := range t.args {
			args[i] = subst(a, m)
		}
		return namedT{t.d, args}
	case ptrT:
		return ptrT{subst(t.elem, m)}
	case sliceT:
		return sliceT{subst(t.elem, m)}
	case arrayT:
		return arrayT{t.n, subst(t.elem, m)}
	case mapT:
		return mapT{subst(t.key, m), subst(t.elem, m)}
	case chanT:
		return chanT{t.dir, subst(t.elem, m)}
	case funcT:
		return funcT{substAll(t.params, m), substAll(t.results, m), t.variadic}
	case structT:
		fs := make([]field, len(t.fields))
		for i, f := range t.fields {
			fs[i] = f
			fs[i].t = subst(f.t, m)
		}
		return structT{fs}
	}
	return t
}

func substAll(ts []typ, m map[*tparam]typ) []typ {
	out := make([]typ, len(ts))
	for i, t := range ts {
		out[i] = subst(t, m)
	}
	return out
}

// bind maps d's type parameters to args.
func bind(tps []*tparam, args []typ) map[*tparam]typ {
	m := map[*tparam]typ{}
	for i, p := range tps {
		if i < len(args) {
			m[p] = args[i]
		}
	}
	return m
}

// unalias follows aliases (and instantiates generic ones).
func unalias(t typ) typ {
	for {
		n, ok := t.(namedT)
		if !ok || !n.d.alias || n.d.under == nil {
			return t
		}
		t = subst(n.d.under, bind(n.d.tparams, n.args))
	}
}

// underlying is t's underlying type expression, when the fuzzer knows it.
func underlying(t typ) typ {
	t = unalias(t)
	if n, ok := t.(namedT); ok && n.d.under != nil && n.d.iface == nil {
		return underlying(subst(n.d.under, bind(n.d.tparams, n.args)))
	}
	return t
}

// isFunc reports whether values of t are funcs.
func isFunc(t typ) bool {
	_, ok := underlying(t).(funcT)
	return ok
}

// funcOf is t's func type.
func funcOf(t typ) funcT {
	return underlying(t).(funcT)
}

// isError reports whether t is error.
func isError(t typ) bool {
	n, ok := unalias(t).(namedT)
	return ok && n.d == stdError
}

// isContext reports whether t is context.Context.
func isContext(t typ) bool {
	n, ok := unalias(t).(namedT)
	return ok && n.d == stdContext
}

// ts writes t as source text in file f.
func (f *file) ts(t typ) string {
	switch t := t.(type) {
	case basicT:
		return t.name
	case namedT:
		s := f.qual(t.d.pkg) + t.d.name
		if len(t.args) > 0 {
			s += "[" + f.tlist(t.args) + "]"
		}
		return s
	case ptrT:
		return "*" + f.ts(t.elem)
	case sliceT:
		return "[]" + f.ts(t.elem)
	case arrayT:
		return "[" + strconv.Itoa(t.n) + "]" + f.ts(t.elem)
	case mapT:
		return "map[" + f.ts(t.key) + "]" + f.ts(t.elem)
	case chanT:
		e := f.ts(t.elem)
		switch t.dir {
		case sendOnly:
			return "chan<- " + e
		case recvOnly:
			return "<-chan " + e
		}
		if ec, ok := t.elem.(chanT); ok && ec.dir == recvOnly {
			return "chan (" + e + ")"
		}
		return "chan " + e
	case funcT:
		return "func" + f.sig(t, nil, nil)
	case structT:
		var parts []string
		for _, fl := range t.fields {
			s := f.ts(fl.t)
			if !fl.embedded {
				s = fl.name + " " + s
			}
			if fl.tag != "" {
				s += " `" + fl.tag + "`"
			}
			parts = append(parts, s)
		}
		return "struct{ " + strings.Join(parts, "; ") + " }"
	case tparamT:
		return t.p.name
	case litT:
		if t.withReader {
			return "interface{ " + f.qual(pIO) + "Reader; Len() int }"
		}
		return "interface{ Len() int }"
	}
	panic("ifacegen: unknown type")
}

func (f *file) tlist(ts []typ) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = f.ts(t)
	}
	return strings.Join(parts, ", ")
}

// sig writes a signature: (params) results, with names when given.
func (f *file) sig(ft funcT, pnames, rnames []string) string {
	var b strings.Builder
	b.WriteString("(")
	for i, p := range ft.params {
		if i > 0 {
			b.WriteString(", ")
		}
		if pnames != nil {
			b.WriteString(pnames[i] + " ")
		}
		if ft.variadic && i == len(ft.params)-1 {
			b.WriteString("..." + f.ts(p.(sliceT).elem))
		} else {
			b.WriteString(f.ts(p))
		}
	}
	b.WriteString(")")
	switch {
	case len(ft.results) == 0:
	case len(ft.results) == 1 && rnames == nil:
		b.WriteString(" " + f.ts(ft.results[0]))
	default:
		b.WriteString(" (")
		for i, r := range ft.results {
			if i > 0 {
				b.WriteString(", ")
			}
			if rnames != nil {
				b.WriteString(rnames[i] + " ")
			}
			b.WriteString(f.ts(r))
		}
		b.WriteString(")")
	}
	return b.String()
}
