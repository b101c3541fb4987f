package render

import (
	"go/types"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/model"
)

// A plain interface (textIface: no type parameters, no chain, no keys, no
// stale caches, every method plain or unguarded, every type in its
// signatures a name, a pointer, a slice, an array, a map or a func of
// those) is written here as text, all of it: the type, the constructor
// with its RouteConfig literals, the assertion and every method, comments
// included, gofmt-clean as they stand. jennifer then renders only a marker
// declaration in its place, and go/format parses and prints one line
// instead of the interface's declarations; the marker's line is replaced
// by the text afterwards (spliceDecls). Before this, go/format (the
// constructors' composite literals above all: gofmt aligns their keys)
// was most of a run over the 200 × 10 interfaces in one file
// (docs/generator-speed.md). The text is the bytes gofmt prints for the
// trees iface() builds otherwise; TestTextBodiesAsTrees holds the two to
// each other, and whatever has no text form here keeps the trees.

// declMarker starts the marker declaration of an interface written as
// text: var _ = _breakergenDeclN(uses...), N indexing gen.decls.
const declMarker = "_breakergenDecl"

// use records that the text names path's package, so that its marker makes
// jennifer import it.
func (g *gen) use(path string) {
	if g.used != nil {
		g.used[path] = true
	}
}

// qualText is name qualified by the name path's package has in the file,
// or "" when it has none.
func (g *gen) qualText(path, name string) string {
	if path == g.local.Path() {
		return name
	}
	n, ok := g.im.names[path]
	if !ok {
		return ""
	}
	g.use(path)
	return n + "." + name
}

// durationText is duration(d) as gofmt prints it as a literal's value, or
// "" when time has no name in the file.
func (g *gen) durationText(d time.Duration) string {
	for _, u := range durationUnits {
		if d%u.d == 0 {
			q := g.qualText("time", u.name)
			if q == "" || d == u.d {
				return q
			}
			return strconv.FormatInt(int64(d/u.d), 10) + " * " + q
		}
	}
	return strconv.FormatInt(int64(d), 10)
}

// typeText is tr.typ(t) as text, or "" for a type it does not write
// (channels, structs, interfaces with methods, unions).
func (g *gen) typeText(t types.Type) string {
	named := func(obj *types.TypeName, args *types.TypeList) string {
		s := obj.Name()
		if obj.Pkg() != nil && obj.Pkg().Path() != g.local.Path() {
			if s = g.qualText(obj.Pkg().Path(), obj.Name()); s == "" {
				return ""
			}
		}
		if args.Len() == 0 {
			return s
		}
		parts := make([]string, 0, args.Len())
		for a := range args.Types() {
			p := g.typeText(a)
			if p == "" {
				return ""
			}
			parts = append(parts, p)
		}
		return s + "[" + strings.Join(parts, ", ") + "]"
	}
	elem := func(prefix string, e types.Type) string {
		if s := g.typeText(e); s != "" {
			return prefix + s
		}
		return ""
	}
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return g.qualText("unsafe", "Pointer")
		}
		return t.Name()
	case *types.Alias:
		return named(t.Obj(), t.TypeArgs())
	case *types.Named:
		return named(t.Obj(), t.TypeArgs())
	case *types.TypeParam:
		return t.Obj().Name()
	case *types.Pointer:
		return elem("*", t.Elem())
	case *types.Slice:
		return elem("[]", t.Elem())
	case *types.Array:
		return elem("["+strconv.FormatInt(t.Len(), 10)+"]", t.Elem())
	case *types.Map:
		if k := g.typeText(t.Key()); k != "" {
			return elem("map["+k+"]", t.Elem())
		}
	case *types.Signature:
		if s, ok := g.signatureText(t); ok {
			return "func" + s
		}
	case *types.Interface:
		if t.Empty() {
			return "interface{}"
		}
	}
	return ""
}

// signatureText is tr.signature(sig) as text.
func (g *gen) signatureText(sig *types.Signature) (string, bool) {
	n := sig.Params().Len()
	params := make([]string, n)
	for i := range n {
		v := sig.Params().At(i)
		var t string
		if sig.Variadic() && i == n-1 {
			t = g.typeText(v.Type().(*types.Slice).Elem())
			if t != "" {
				t = "..." + t
			}
		} else {
			t = g.typeText(v.Type())
		}
		if t == "" {
			return "", false
		}
		if v.Name() != "" {
			t = v.Name() + " " + t
		}
		params[i] = t
	}
	res, ok := g.resultsText(sig.Results(), nil)
	return "(" + strings.Join(params, ", ") + ")" + res, ok
}

// resultsText is tr.results(r, names) as text, with the space before it.
func (g *gen) resultsText(r *types.Tuple, names []string) (string, bool) {
	name := func(i int) string { return resultName(r, names, i) }
	switch {
	case r.Len() == 0:
		return "", true
	case r.Len() == 1 && name(0) == "":
		t := g.typeText(r.At(0).Type())
		return " " + t, t != ""
	}
	parts := make([]string, r.Len())
	for i := range r.Len() {
		t := g.typeText(r.At(i).Type())
		if t == "" {
			return "", false
		}
		if n := name(i); n != "" {
			t = n + " " + t
		}
		parts[i] = t
	}
	return " (" + strings.Join(parts, ", ") + ")", true
}

// commentText writes s as comment() does, wrapped at 80 columns.
func commentText(b *strings.Builder, s string) {
	commentLines(b, wrap(s))
}

// commentLines writes lines as the comment lines jennifer and gofmt make
// of them.
func commentLines(b *strings.Builder, lines []string) {
	for _, l := range lines {
		if l == "" {
			b.WriteString("//\n")
			continue
		}
		b.WriteString("// ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// textIface returns the marker declaration that stands for in written as
// text, or nil when in keeps the trees of iface().
func (g *gen) textIface(in *model.Interface) jen.Code {
	if !textBodies || in.TypeParams != nil || in.Chain || hasStale(in) {
		return nil
	}
	for _, r := range in.Routes {
		if r.Family != nil {
			return nil
		}
	}
	g.used = map[string]bool{}
	defer func() { g.used = nil }()
	text, ok := g.ifaceText(in)
	if !ok {
		return nil
	}
	g.decls = append(g.decls, text)
	uses := make([]jen.Code, 0, len(g.used))
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range g.used {
			if !yield(p) {
				return
			}
		}
	}) {
		uses = append(uses, jen.Qual(p, "X"))
	}
	return jen.Var().Id("_").Op("=").Id(declMarker + strconv.Itoa(len(g.decls)-1)).Call(uses...)
}

// ifaceText is what iface() writes for in, as text.
func (g *gen) ifaceText(in *model.Interface) (string, bool) {
	reserved := map[string]bool{"nil": true}
	for _, p := range []string{RuntimePath, ImplPath, "context"} {
		if n, ok := g.im.names[p]; ok {
			reserved[n] = true
		}
	}
	recv := receiverAlloc(in, reserved).fresh("w")
	next := g.typeText(in.Obj.Type())
	if next == "" {
		return "", false
	}
	doc := wrapperDoc(in)
	for i, l := range doc {
		// gofmt would drop a blank line at either end, or one of two.
		if l == "" && (i == 0 || i == len(doc)-1 || doc[i-1] == "") {
			return "", false
		}
	}
	var b strings.Builder
	b.Grow(1024 + 600*len(in.Methods))

	// The type.
	commentLines(&b, doc)
	fields := [][2]string{{in.NextField, next}}
	for _, r := range in.Routes {
		route := g.qualText(ImplPath, "Route")
		if route == "" {
			return "", false
		}
		fields = append(fields, [2]string{r.Field, "*" + route})
	}
	b.WriteString("type " + in.Wrapper + " struct {\n")
	width := 0
	for _, f := range fields {
		width = max(width, utf8.RuneCountInString(f[0]))
	}
	for _, f := range fields {
		b.WriteString("\t" + f[0] + strings.Repeat(" ", width+1-utf8.RuneCountInString(f[0])) + f[1] + "\n")
	}
	b.WriteString("}\n\n")

	// The constructor.
	ca := pkgAlloc(in, reserved)
	nextName, regName := ca.fresh("next"), ca.fresh("reg")
	registry := g.qualText(RuntimePath, "Registry")
	if registry == "" {
		return "", false
	}
	commentText(&b, in.Ctor+" wraps "+nextName+"; breakers and limiters come from "+regName+", or from runtime.Default() when "+regName+" is nil.")
	b.WriteString("func " + in.Ctor + "(" + nextName + " " + next + ", " + regName + " *" + registry + ") *" + in.Wrapper + " {\n")
	b.WriteString("\treturn &" + in.Wrapper + "{\n")
	// Each route's value spans lines: gofmt aligns no key of this literal
	// with another.
	b.WriteString("\t\t" + in.NextField + ": " + nextName + ",\n")
	for _, r := range in.Routes {
		newRoute, routeConfig := g.qualText(ImplPath, "NewRoute"), g.qualText(ImplPath, "RouteConfig")
		if newRoute == "" || routeConfig == "" {
			return "", false
		}
		b.WriteString("\t\t" + r.Field + ": " + newRoute + "(" + regName + ", " + nextName + ", " + routeConfig + "{\n")
		if !g.routeConfigText(&b, r, 3) {
			return "", false
		}
		b.WriteString("\t\t}),\n")
	}
	b.WriteString("\t}\n}\n\n")
	b.WriteString("var _ " + next + " = (*" + in.Wrapper + ")(nil)\n")

	for _, m := range in.Methods {
		b.WriteByte('\n')
		if !g.methodText(&b, in, m, recv, reserved) {
			return "", false
		}
	}
	return b.String(), true
}

// routeConfigText writes the elements of r's RouteConfig literal (the
// lines between its braces) at depth tabs, as gofmt prints them: the keys
// of consecutive one-line elements aligned, an element of several lines
// (a runtime.Config of more than five fields) breaking the alignment.
func (g *gen) routeConfigText(b *strings.Builder, r *model.Route, depth int) bool {
	bc, items := g.routeItems(r, nil, false)
	config := g.qualText(RuntimePath, "Config")
	if config == "" {
		return false
	}
	for _, e := range slices.Concat(bc, items) {
		if e.text == "" {
			return false
		}
	}
	breaker := kv{key: "Breaker"}
	if len(bc) <= 5 {
		parts := make([]string, len(bc))
		for i, e := range bc {
			parts[i] = e.key + ": " + e.text
		}
		breaker.text = config + "{" + strings.Join(parts, ", ") + "}"
	} else {
		var inner strings.Builder
		inner.WriteString(config + "{\n")
		alignedKVs(&inner, bc, depth+1)
		inner.WriteString(strings.Repeat("\t", depth) + "}")
		breaker.text = inner.String()
	}
	alignedKVs(b, append([]kv{breaker}, items...), depth)
	return true
}

// alignedKVs writes the elements of a composite literal, one a line, at
// depth tabs, as gofmt aligns them: the values of consecutive one-line
// elements start in one column, one space after the longest key. An
// element whose text spans lines stands alone. gofmt stops aligning two
// one-line elements whose keys differ much in length only when a key is
// longer than 40 columns; the keys here are field names of the runtime's
// configs.
func alignedKVs(b *strings.Builder, kvs []kv, depth int) {
	indent := strings.Repeat("\t", depth)
	for i := 0; i < len(kvs); {
		if strings.Contains(kvs[i].text, "\n") {
			b.WriteString(indent + kvs[i].key + ": " + kvs[i].text + ",\n")
			i++
			continue
		}
		j, width := i, 0
		for ; j < len(kvs) && !strings.Contains(kvs[j].text, "\n"); j++ {
			width = max(width, utf8.RuneCountInString(kvs[j].key)+1) // the key and its colon
		}
		for _, e := range kvs[i:j] {
			b.WriteString(indent + e.key + ":" + strings.Repeat(" ", width-utf8.RuneCountInString(e.key)) + e.text + ",\n")
		}
		i = j
	}
}

// methodText writes method() of a wrapper's method as text: an unguarded
// method, or a plain one whose body plainText writes. It reports false for
// any other.
func (g *gen) methodText(b *strings.Builder, in *model.Interface, m *model.Method, recv string, reserved map[string]bool) bool {
	impl := in.NextField
	a, names := g.methodNames(in, m, recv, reserved, false)
	sig := m.Sig
	n := sig.Params().Len()
	params := make([]string, n)
	args := strings.Join(names, ", ")
	for i := range n {
		v := sig.Params().At(i)
		var t string
		if sig.Variadic() && i == n-1 {
			if t = g.typeText(v.Type().(*types.Slice).Elem()); t != "" {
				t = "..." + t
			}
			args += "..."
		} else {
			t = g.typeText(v.Type())
		}
		if t == "" {
			return false
		}
		params[i] = names[i] + " " + t
	}
	call := recv + "." + impl + "." + m.Name + "(" + args + ")"
	head := "func (" + recv + " *" + in.Wrapper + ") " + m.Name + "(" + strings.Join(params, ", ") + ")"
	res := sig.Results()

	if m.Route == nil {
		if rnames, errName, ok := errorResultNames(res, a); ok {
			results, ok := g.resultsText(res, rnames)
			nilImpl := g.qualText(ImplPath, "ErrNilImpl")
			if !ok || nilImpl == "" {
				return false
			}
			commentText(b, m.Name+" calls "+impl+"."+m.Name+" unguarded: "+whyOf(m)+".")
			b.WriteString(head + results + " {\n\tif " + recv + "." + impl + " == nil {\n\t\t" + errName + " = " + nilImpl + "\n\t\treturn\n\t}\n\treturn " + call + "\n}\n")
			return true
		}
		results, ok := g.resultsText(res, make([]string, res.Len()))
		if !ok {
			return false
		}
		body := "\treturn " + call
		if res.Len() == 0 {
			body = "\t" + call
		}
		commentText(b, m.Name+" calls "+impl+"."+m.Name+" unguarded: "+whyOf(m)+".")
		b.WriteString(head + results + " {\n" + body + "\n}\n")
		return true
	}

	r := m.Route
	if m.Key != nil || m.Judged() || r.Helper() || m.UseTimeout && m.Response != 0 || m.StaleField != "" || closesBody(m) {
		return false // method() has these: closesBody's among them, a body to close when refused
	}
	// The names method() allocates, in its order.
	errName := a.fresh("err")
	callName := a.fresh("call")
	rnames := make([]string, res.Len())
	for i := range rnames {
		rnames[i] = "_"
	}
	rnames[len(rnames)-1] = errName
	ctx := ""
	if m.Ctx {
		ctx = names[0]
	} else {
		ctx = a.fresh("ctx")
	}
	pb := plainBody{pre: g.plainCtx(in, m, ctx, errName, names), recv: recv, field: r.Field, impl: impl, method: m.Name,
		ctx: ctx, err: errName, cal: callName, names: names, variadic: sig.Variadic(),
		rate: r.Settings.Rate.Per > 0, timeout: m.UseTimeout, background: !m.Ctx && m.CtxFrom == 0, convert: m.CtxSelf}
	if m.UseTimeout && m.CtxFrom > 0 {
		pb.ctxFrom = names[m.CtxFrom-1]
	}
	body, ok := g.plainText(pb, a)
	results, rok := g.resultsText(res, rnames)
	if !ok || !rok {
		return false
	}
	g.use(ImplPath)
	if pb.background || pb.convert {
		g.use("context")
	}
	commentText(b, m.Name+" calls "+impl+"."+m.Name+" through breaker "+strconv.Quote(r.Name)+ctxFromDoc(m, names)+answersDoc(m)+".")
	b.WriteString(head + results + " {\n" + body + "}\n")
	return true
}

// spliceDecls replaces each marker line of src, a part formatted by
// jennifer, by the declarations it stands for.
func spliceDecls(src []byte, decls []string) []byte {
	return splice(src, "\nvar _ = "+declMarker, 1, decls)
}
