// Package render writes the Go source of one output file with jennifer.
package render

import (
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"maps"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/model"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/textwrap"
	bgruntime "github.com/breakergen/breakergen/runtime"
)

// File renders one output file: header, build line, package and wrappers.
//
// A large file is rendered in parts, in parallel: rendering (the text of
// plain interfaces, plaindecl.go, and jennifer's formatting of the rest)
// is much of a run whose package keeps its interfaces in one file, and a
// part renders alone as it does in the whole, its declarations being
// separated from the next part's by a blank line.
func File(mf *model.File) ([]byte, error) {
	parts := 1
	if len(mf.Interfaces) >= 2*partMin {
		parts = min(goruntime.GOMAXPROCS(0), len(mf.Interfaces)/partMin)
	}
	return file(mf, parts)
}

// file renders mf in parts (at least one), each formatted on its own, and
// joins them.
func file(mf *model.File, parts int) ([]byte, error) {
	if len(mf.Interfaces) == 0 {
		return nil, fmt.Errorf("render: %s: no interfaces", mf.Path)
	}
	local := mf.Interfaces[0].Obj.Pkg()
	im := fileImports(mf, local)

	parts = max(1, min(parts, len(mf.Interfaces)))
	bodies := make([][]byte, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := k*len(mf.Interfaces)/parts, (k+1)*len(mf.Interfaces)/parts
		wg.Go(func() {
			f := jen.NewFilePathName(local.Path(), mf.PkgName)
			im.apply(f)
			g := &gen{im: im, tr: typer{local: local}, local: local}
			for i, in := range mf.Interfaces[lo:hi] {
				if i > 0 {
					f.Line()
				}
				g.iface(f, in)
			}
			var body bytes.Buffer
			errs[k] = f.Render(&body)
			bodies[k] = spliceDecls(spliceBodies(body.Bytes(), g.bodies), g.decls)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("render: %s: %w", mf.Path, err)
	}
	body, err := joinParts(bodies)
	if err != nil {
		return nil, fmt.Errorf("render: %s: %w", mf.Path, err)
	}
	var out bytes.Buffer
	out.WriteString(load.Header + "\n\n")
	if mf.Build != "" {
		out.WriteString(mf.Build + "\n\n")
	}
	out.Write(groupImports(body))
	return out.Bytes(), nil
}

// fileImports names the packages an output file may import.
func fileImports(mf *model.File, local *types.Package) *imports {
	im := newImports(mf.Reserved)
	// Packages of the interfaces' own types first, so that they keep their
	// names; then what the generated bodies use.
	usesTime, usesContext, usesSQL, usesHTTP := false, false, false, false
	for _, in := range mf.Interfaces {
		if in.TypeParams != nil {
			for tp := range in.TypeParams.TypeParams() {
				im.collect(tp.Constraint(), local)
			}
		}
		im.collect(in.Obj.Type(), local)
		for _, m := range in.Methods {
			im.collect(m.Sig, local)
			if m.Route != nil && (!m.Ctx || m.UseTimeout) {
				usesContext = true
			}
			if m.Route != nil && m.Carrier != nil && m.Carrier.Refuse == model.CarrySQLRow {
				usesSQL = true
			}
			if m.Route != nil && (m.Response > 0 && (m.UseTimeout || m.Route.Failure != nil && m.Route.Retries() || in.Chain) ||
				m.Request > 0 && (m.Route.Retries() || in.Chain || m.Ctx && m.UseTimeout) || closesBody(m) || m.Key != nil && m.Key.Kind == model.KeyHost) {
				usesHTTP = true
			}
		}
		for _, r := range in.Routes {
			if durations(r.Settings) || r.Timeout > 0 || r.MaxWait > 0 || r.Backoff.D > 0 {
				usesTime = true
			}
			if r.Stale > 0 || in.Chain && r.Hedge > 0 {
				usesTime = true
			}
			if in.Chain && in.Default != nil && durations(in.Default.Settings) {
				usesTime = true // the fallbacks' breakers
			}
			for _, e := range r.Exclude {
				if e.Path != local.Path() {
					im.add(e.Path, pkgNameOf(local, e))
				}
			}
			if v := r.Valid; v != nil && v.Path != local.Path() {
				im.add(v.Path, pkgNameOf(local, *v))
			}
			if v := r.Failure; v != nil && v.Path != local.Path() {
				im.add(v.Path, pkgNameOf(local, *v))
			}
		}
	}
	if usesContext {
		im.add("context", "context")
	}
	if usesTime {
		im.add("time", "time")
	}
	im.add(RuntimePath, "runtime")
	im.add(ImplPath, "breakerimpl")
	if usesSQL {
		im.add(SQLImplPath, "sqlimpl")
	}
	if usesHTTP {
		im.add(HTTPGuardPath, "httpguard")
	}
	return im
}

// partMin is the fewest interfaces a part of a file rendered in parallel
// has.
const partMin = 16

// joinParts joins the formatted files that jennifer rendered for the parts
// of one output: the package clause once, the union of their imports sorted
// by path (as jennifer and gofmt sort them), and their declarations in
// order, a blank line between parts.
func joinParts(parts [][]byte) ([]byte, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	var head []byte
	specs := map[string]string{} // path: the spec's line
	var decls [][]byte
	for _, src := range parts {
		pkgEnd := bytes.Index(src, []byte("\n\n"))
		if pkgEnd < 0 || !bytes.HasPrefix(src, []byte("package ")) {
			return nil, errors.New("a part does not start with its package clause")
		}
		if head == nil {
			head = src[:pkgEnd+2]
		}
		rest := src[pkgEnd+2:]
		var lines []string
		switch {
		case bytes.HasPrefix(rest, []byte("import (\n")):
			end := bytes.Index(rest, []byte("\n)\n"))
			if end < 0 {
				return nil, errors.New("a part's import block does not end")
			}
			lines = strings.Split(string(rest[len("import (\n"):end]), "\n")
			rest = rest[end+len("\n)\n"):]
		case bytes.HasPrefix(rest, []byte("import ")):
			end := bytes.IndexByte(rest, '\n')
			lines = []string{"\t" + string(rest[len("import "):end])}
			rest = rest[end+1:]
		}
		for _, l := range lines {
			q := strings.IndexByte(l, '"')
			if q < 0 {
				return nil, fmt.Errorf("a part's import %q has no path", l)
			}
			specs[l[q:]] = l
		}
		decls = append(decls, bytes.TrimLeft(rest, "\n"))
	}
	var out bytes.Buffer
	out.Write(head)
	paths := slices.Sorted(maps.Keys(specs))
	if len(paths) == 1 {
		out.WriteString("import " + strings.TrimPrefix(specs[paths[0]], "\t") + "\n\n")
	} else if len(paths) > 1 {
		out.WriteString("import (\n")
		for _, p := range paths {
			out.WriteString(specs[p] + "\n")
		}
		out.WriteString(")\n\n")
	}
	for i, d := range decls {
		if i > 0 {
			out.WriteString("\n")
		}
		out.Write(d)
	}
	return out.Bytes(), nil
}

func pkgNameOf(local *types.Package, e model.Ref) string {
	for _, p := range local.Imports() {
		if p.Path() == e.Path {
			return p.Name()
		}
	}
	// Imported by the interface's file, so it is among the package's imports.
	i := strings.LastIndex(e.Path, "/")
	return e.Path[i+1:]
}

type gen struct {
	im     *imports
	tr     typer
	local  *types.Package
	bodies []string // the bodies written as text, by marker (plaintext.go)
	decls  []string // the interfaces written as text, by marker (plaindecl.go)
	used   map[string]bool
}

// rt names a declaration of the runtime's user API.
func (g *gen) rt(name string) *jen.Statement { return jen.Qual(RuntimePath, name) }

// impl names a declaration of the package for generated code.
func (g *gen) impl(name string) *jen.Statement { return jen.Qual(ImplPath, name) }

// comment writes s as comment lines wrapped at 80 columns.
func comment(f *jen.File, s string) {
	for _, l := range wrap(s) {
		f.Comment(l)
	}
}

// typeParams returns the declaration [K comparable, V any] and the use
// [K, V] of a generic interface's parameters.
func (g *gen) typeParams(in *model.Interface) (decl, use []jen.Code) {
	if in.TypeParams == nil {
		return nil, nil
	}
	for tp := range in.TypeParams.TypeParams() {
		decl = append(decl, jen.Id(tp.Obj().Name()).Add(g.tr.constraint(tp.Constraint())))
		use = append(use, jen.Id(tp.Obj().Name()))
	}
	return decl, use
}

func (g *gen) iface(f *jen.File, in *model.Interface) {
	if mark := g.textIface(in); mark != nil { // the same declarations, as text
		f.Add(mark)
		return
	}
	decl, use := g.typeParams(in)
	wrapper := func() *jen.Statement {
		s := jen.Id(in.Wrapper)
		if use != nil {
			s = s.Types(use...)
		}
		return s
	}
	next := func() *jen.Statement {
		if use != nil {
			return jen.Id(in.Name).Types(use...)
		}
		return jen.Add(g.tr.typ(in.Obj.Type()))
	}

	// Names no local may take: the body's packages and the type parameters.
	reserved := map[string]bool{"nil": true}
	for _, p := range []string{RuntimePath, ImplPath, "context"} {
		if n, ok := g.im.names[p]; ok {
			reserved[n] = true
		}
	}
	if in.TypeParams != nil {
		for tp := range in.TypeParams.TypeParams() {
			reserved[tp.Obj().Name()] = true
		}
	}
	// And the local funcs the bodies call (valid, failure): a receiver or
	// a local of their name would shadow them.
	for _, r := range in.Routes {
		for _, ref := range []*model.Ref{r.Valid, r.Failure} {
			if ref != nil && ref.Path == g.local.Path() {
				reserved[ref.Name] = true
			}
		}
	}
	// One receiver name for every method.
	recvAlloc := receiverAlloc(in, reserved)
	recv := recvAlloc.fresh("w")

	// The type.
	for _, line := range wrapperDoc(in) {
		f.Comment(line)
	}
	var fields []jen.Code
	fields = append(fields, jen.Id(in.NextField).Add(next()))
	for _, r := range in.Routes {
		switch {
		case r.Family == nil:
			fields = append(fields, jen.Id(r.Field).Op("*").Add(g.impl("Route")))
		case r.Family.Route == r: // one field per family
			fields = append(fields, jen.Id(r.Field).Op("*").Add(g.impl("Family")))
		}
	}
	fields = append(fields, g.staleFields(in)...)
	f.Type().Id(in.Wrapper).Types(decl...).Struct(fields...)
	f.Line()

	// The constructor.
	ca := pkgAlloc(in, reserved)
	nextName, regName := ca.fresh("next"), ca.fresh("reg")
	comment(f, fmt.Sprintf("%s wraps %s; breakers and limiters come from %s, or from runtime.Default() when %s is nil.", in.Ctor, nextName, regName, regName))
	var vals []jen.Code
	vals = append(vals, jen.Id(in.NextField).Op(":").Id(nextName))
	for _, r := range in.Routes {
		switch {
		case r.Family == nil:
			vals = append(vals, jen.Id(r.Field).Op(":").Add(g.newRoute(regName, jen.Id(nextName), r, nil)))
		case r.Family.Route == r:
			vals = append(vals, jen.Id(r.Field).Op(":").Add(g.newFamily(regName, jen.Id(nextName), r, false)))
		}
	}
	vals = append(vals, g.staleInits(in, regName)...)
	f.Func().Id(in.Ctor).Types(decl...).Params(
		jen.Id(nextName).Add(next()),
		jen.Id(regName).Op("*").Add(g.rt("Registry")),
	).Op("*").Add(wrapper()).Block(
		jen.Return(jen.Op("&").Add(wrapper()).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, vals...)),
	)
	f.Line()
	if use == nil {
		f.Var().Id("_").Add(next()).Op("=").Parens(jen.Op("*").Add(wrapper())).Parens(jen.Nil())
	} else {
		comment(f, fmt.Sprintf("%s implements %s for every type argument.", in.Wrapper, in.Name))
		f.Func().Id("_").Types(decl...).Params().Block(
			jen.Var().Id("_").Add(next()).Op("=").Parens(jen.Op("*").Add(wrapper())).Parens(jen.Nil()),
		)
	}

	for _, m := range in.Methods {
		f.Line()
		g.method(f, in, m, recv, wrapper(), reserved, false, next())
	}

	if !in.Chain {
		return
	}
	chainRecv := recvAlloc.fresh("c")
	g.chain(f, in, decl, use, next, reserved)
	for _, m := range in.Methods {
		f.Line()
		g.method(f, in, m, chainRecv, chainType(in, use), reserved, true, next())
	}
}

func chainType(in *model.Interface, use []jen.Code) *jen.Statement {
	s := jen.Id(in.ChainType)
	if use != nil {
		s = s.Types(use...)
	}
	return s
}

// staleFields declares the stale caches of the methods that keep one.
func (g *gen) staleFields(in *model.Interface) []jen.Code {
	var out []jen.Code
	for _, m := range in.Methods {
		if m.StaleField == "" {
			continue
		}
		k, v, _, _ := g.staleTypes(m)
		out = append(out, jen.Id(m.StaleField).Op("*").Add(g.impl("StaleCache")).Types(k, v))
	}
	return out
}

// staleInits creates the stale caches on reg.
func (g *gen) staleInits(in *model.Interface, reg string) []jen.Code {
	var out []jen.Code
	for _, m := range in.Methods {
		if m.StaleField == "" {
			continue
		}
		k, v, _, _ := g.staleTypes(m)
		size := jen.Add(g.impl("DefaultStaleSize"))
		if m.Route.StaleSize > 0 {
			size = jen.Lit(m.Route.StaleSize)
		}
		out = append(out, jen.Id(m.StaleField).Op(":").Add(g.impl("NewStaleCache")).Types(k, v).Call(jen.Id(reg), g.duration(m.Route.Stale), size))
	}
	return out
}

// chain renders the chain type XChain and its constructor.
func (g *gen) chain(f *jen.File, in *model.Interface, decl, use []jen.Code, next func() *jen.Statement, reserved map[string]bool) {
	ct := func() *jen.Statement { return chainType(in, use) }
	f.Line()
	for _, line := range chainDoc(in) {
		f.Comment(line)
	}
	fbType := g.rt("Fallback").Types(next())
	fields := []jen.Code{
		jen.Id(in.PrimaryField).Add(next()),
		jen.Id(in.FallbacksField).Index().Add(fbType),
	}
	for _, r := range in.Routes {
		switch {
		case r.Family == nil:
			fields = append(fields, jen.Id(r.Field).Op("*").Add(g.impl("Route")))
		case r.Family.Route == r: // one field per family
			fields = append(fields, jen.Id(r.Field).Op("*").Add(g.impl("Family")))
		}
		fields = append(fields, jen.Id(r.FallbackField).Index().Op("*").Add(g.impl("Route")))
	}
	fields = append(fields, g.staleFields(in)...)
	f.Type().Id(in.ChainType).Types(decl...).Struct(fields...)
	f.Line()

	ca := pkgAlloc(in, reserved)
	primary, reg, fallbacks := ca.fresh("primary"), ca.fresh("reg"), ca.fresh("fallbacks")
	c, fb := ca.fresh("c"), ca.fresh("fb")
	then, what := "", " and limiters"
	if hasStale(in) {
		then, what = ", then the stale cache of the methods that keep one", ", limiters and caches"
	}
	for _, l := range wrap(fmt.Sprintf("%s tries %s (guarded by %s's annotated routes), then each of %s in order%s. Breakers%s come from %s, or from runtime.Default() when %s is nil; the breaker of a fallback is named \"fallback:\" and its Name, with the settings of %s.",
		in.ChainCtor, primary, in.Name, fallbacks, then, what, reg, reg, defaultSettings(in))) {
		f.Comment(l)
	}
	vals := []jen.Code{
		jen.Id(in.PrimaryField).Op(":").Id(primary),
		// A copy (the caller's slice may change, its routes would not),
		// and a warning of two fallbacks of one Name.
		jen.Id(in.FallbacksField).Op(":").Add(g.impl("Fallbacks")).Call(jen.Id(reg), jen.Id(fallbacks)),
	}
	for _, r := range in.Routes {
		switch {
		case r.Family == nil:
			vals = append(vals, jen.Id(r.Field).Op(":").Add(g.impl("NewRoute").Call(jen.Id(reg), jen.Id(primary), g.routeConfig(r, nil, true))))
		case r.Family.Route == r:
			vals = append(vals, jen.Id(r.Field).Op(":").Add(g.newFamily(reg, jen.Id(primary), r, true)))
		}
	}
	vals = append(vals, g.staleInits(in, reg)...)
	body := []jen.Code{
		jen.Id(c).Op(":=").Op("&").Add(ct()).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, vals...),
	}
	if len(in.Routes) > 0 {
		var adds []jen.Code
		for _, r := range in.Routes {
			fr := g.fallbackRoute(in, r)
			adds = append(adds, jen.Id(c).Dot(r.FallbackField).Op("=").Append(jen.Id(c).Dot(r.FallbackField),
				g.newRoute(reg, jen.Id(fb).Dot("Impl"), fr, g.impl("FallbackName").Call(jen.Id(fb).Dot("Name")))))
		}
		body = append(body, jen.For(jen.List(jen.Id("_"), jen.Id(fb)).Op(":=").Range().Id(fallbacks)).Block(adds...))
	}
	body = append(body, jen.Return(jen.Id(c)))
	f.Func().Id(in.ChainCtor).Types(decl...).Params(
		jen.Id(primary).Add(next()),
		jen.Id(reg).Op("*").Add(g.rt("Registry")),
		jen.Id(fallbacks).Op("...").Add(fbType),
	).Op("*").Add(ct()).Block(body...)
	f.Line()
	if use == nil {
		f.Var().Id("_").Add(next()).Op("=").Parens(jen.Op("*").Add(ct())).Parens(jen.Nil())
	} else {
		comment(f, fmt.Sprintf("%s implements %s for every type argument.", in.ChainType, in.Name))
		f.Func().Id("_").Types(decl...).Params().Block(
			jen.Var().Id("_").Add(next()).Op("=").Parens(jen.Op("*").Add(ct())).Parens(jen.Nil()),
		)
	}
}

// fallbackRoute is the route a fallback takes for the methods of r: the
// breaker settings of the interface's default line, r's timeout, exclude
// and valid, one try, no limiter, no concurrency limit and no throttle.
func (g *gen) fallbackRoute(in *model.Interface, r *model.Route) *model.Route {
	fr := &model.Route{Timeout: r.Timeout, Exclude: r.Exclude}
	if in.Default != nil {
		fr.Settings = in.Default.Settings
	}
	// The default line's load control guards its own name's upstream,
	// like its limiter; a fallback is another upstream.
	fr.Settings.Rate = annotation.Rate{}
	fr.Settings.Concurrency, fr.Settings.Throttle = 0, 0
	return fr
}

func hasStale(in *model.Interface) bool {
	for _, m := range in.Methods {
		if m.StaleField != "" {
			return true
		}
	}
	return false
}

func defaultSettings(in *model.Interface) string {
	if in.Default == nil {
		return "the runtime's defaults (no line of " + in.Name + " is its default route)"
	}
	return fmt.Sprintf("%s's default route (breaker %q)", in.Name, in.Default.Name)
}

func chainDoc(in *model.Interface) []string {
	article := articleFor(in.Name)
	then := ""
	if hasStale(in) {
		then = ", then the stale cache of the methods that keep one"
	}
	lines := wrap(fmt.Sprintf("%s is %s %s that answers each call from the first source that can: the primary %s through the breakers of its routes, then each fallback in order, each through its own breaker%s. A caller learns which source answered from runtime.WithProvenance.", in.ChainType, article, in.Name, in.Name, then))
	lines = append(lines, "")
	lines = append(lines, wrap(fmt.Sprintf("Create it with %s; the zero value is not usable. It is safe for concurrent use when the %s values it holds are.", in.ChainCtor, in.Name))...)
	return lines
}

// newRoute renders the route of r on registry reg for calls to impl: the
// route of a nil impl (a nil next or primary, a Fallback without Impl)
// refuses every call with breakerimpl.ErrNilImpl and never touches the
// breaker, which other wrappers and chains may share by name. name, if not
// nil, is the breaker's name instead of r.Name.
func (g *gen) newRoute(reg string, impl jen.Code, r *model.Route, name jen.Code) jen.Code {
	return g.impl("NewRoute").Call(jen.Id(reg), impl, g.routeConfig(r, name, false))
}

// newFamily renders the family of per-key routes of r, a keyed route, on
// registry reg for calls to impl: its bound (runtime.DefaultFamilyKeys
// unless keys= gives one) and its cap on keys out of CLOSED (0: none);
// hedge adds the route's hedge keys, which only a chain's primary uses.
func (g *gen) newFamily(reg string, impl jen.Code, r *model.Route, hedge bool) jen.Code {
	keys := jen.Add(g.rt("DefaultFamilyKeys"))
	if r.Settings.Keys > 0 {
		keys = jen.Lit(r.Settings.Keys)
	}
	return g.impl("NewFamily").Call(jen.Id(reg), impl, g.routeConfig(r, nil, hedge), keys, jen.Lit(r.Settings.MaxOpen))
}

// routeOf is the route a guarded method's call goes through: the
// wrapper's field, or for a keyed method the route of its key, held in the
// local key.
func routeOf(recv string, r *model.Route, key string) *jen.Statement {
	if key != "" {
		return jen.Id(key).Dot("Route")
	}
	return jen.Id(recv).Dot(r.Field)
}

// keyed renders the start of a keyed method's body: the route of its key,
// held in the local key until the method returns, so that the key's
// breaker is not dropped while the call runs. held is false for the plain
// body, which ends the hold itself (see deferDone) with one deferred call
// fewer; every other body defers the key's Done here.
func (g *gen) keyed(recv string, m *model.Method, names []string, key string, held bool) []jen.Code {
	arg := jen.Id(names[m.Key.Param])
	var enter *jen.Statement
	fam := jen.Id(recv).Dot(m.Route.Field)
	switch m.Key.Kind {
	case model.KeyString:
		if m.Key.Convert {
			arg = jen.String().Parens(arg)
		}
		enter = fam.Dot("Key").Call(arg)
	case model.KeyInt:
		if m.Key.Convert {
			arg = jen.Int64().Parens(arg)
		}
		enter = fam.Dot("KeyInt").Call(arg)
	case model.KeyUint:
		if m.Key.Convert {
			arg = jen.Uint64().Parens(arg)
		}
		enter = fam.Dot("KeyUint").Call(arg)
	case model.KeyStringer:
		enter = fam.Dot("KeyString").Call(arg)
	case model.KeyHost:
		enter = fam.Dot("Key").Call(jen.Qual(HTTPGuardPath, "Host").Call(arg))
	}
	if !held {
		return []jen.Code{jen.Id(key).Op(":=").Add(enter)}
	}
	return []jen.Code{
		jen.Id(key).Op(":=").Add(enter),
		jen.Defer().Id(key).Dot("Done").Call(),
	}
}

// keyText is what keys a keyed method's breaker, as its comment says it:
// code, req.URL.Host, sym.String().
func keyText(m *model.Method, names []string) string {
	p := names[m.Key.Param]
	switch m.Key.Kind {
	case model.KeyHost:
		return p + ".URL.Host"
	case model.KeyStringer:
		return p + ".String()"
	}
	return p
}

// breakerDoc names the breaker a guarded method goes through, for its
// comment: breaker "api", or for a keyed method the breaker of its key.
func breakerDoc(m *model.Method, names []string) string {
	r := m.Route
	if m.Key == nil {
		return fmt.Sprintf("breaker %q", r.Name)
	}
	k := keyText(m, names)
	return fmt.Sprintf("breaker %q, keyed: each %s has a breaker of its own in the family %q", r.Name+"/<"+k+">", k, r.Name)
}

// routeConfig renders r's breakerimpl.RouteConfig; name, if not nil, is the
// breaker's name instead of r.Name. hedge adds the route's hedge keys,
// which only a chain's primary uses.
func (g *gen) routeConfig(r *model.Route, name jen.Code, hedge bool) jen.Code {
	bc, items := g.routeItems(r, name, hedge)
	cfg := g.rt("Config").Values(kvCodes(bc)...)
	if len(bc) > 5 {
		// One field a line, as a person writes a long literal.
		cfg = g.rt("Config").Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, kvCodes(bc)...)
	}
	codes := append([]jen.Code{jen.Id("Breaker").Op(":").Add(cfg)}, kvCodes(items)...)
	return g.impl("RouteConfig").Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, codes...)
}

// kv is one key: value element of a composite literal: the value as a
// tree, and as the text gofmt prints for it in a literal ("" when it has
// none: routeConfigText then declines).
type kv struct {
	key  string
	val  jen.Code
	text string
}

func kvCodes(kvs []kv) []jen.Code {
	out := make([]jen.Code, len(kvs))
	for i, e := range kvs {
		out[i] = jen.Id(e.key).Op(":").Add(e.val)
	}
	return out
}

// lit is a literal's kv.
func lit[T int | string](key string, v T) kv {
	var text string
	switch v := any(v).(type) {
	case int:
		text = strconv.Itoa(v)
	case string:
		text = strconv.Quote(v)
	}
	return kv{key, jen.Lit(v), text}
}

// op is the kv of a value written as it stands.
func op(key, v string) kv { return kv{key, jen.Op(v), v} }

// durationKV is the kv of a duration.
func (g *gen) durationKV(key string, d time.Duration) kv {
	return kv{key, g.duration(d), g.durationText(d)}
}

// routeItems are the fields of r's runtime.Config (bc) and the other
// fields of its RouteConfig (items), in order: routeConfig renders them as
// trees, routeConfigText as text.
func (g *gen) routeItems(r *model.Route, name jen.Code, hedge bool) (bc, items []kv) {
	s := r.Settings
	if name == nil {
		bc = append(bc, lit("Name", r.Name))
	} else {
		bc = append(bc, kv{"Name", name, ""})
	}
	if s.Threshold > 0 {
		bc = append(bc, lit("FailureThreshold", s.Threshold))
	}
	if s.Reset > 0 {
		bc = append(bc, g.durationKV("ResetTimeout", s.Reset))
	}
	if s.ResetMax > 0 {
		bc = append(bc, g.durationKV("ResetMax", s.ResetMax))
	}
	if s.Jitter > 0 {
		bc = append(bc, op("ResetJitter", fraction(s.Jitter)))
	}
	if s.HalfOpen > 0 {
		bc = append(bc, lit("HalfOpenMax", s.HalfOpen))
	}
	if s.Successes > 0 {
		bc = append(bc, lit("SuccessThreshold", s.Successes))
	}
	if s.WindowCalls > 0 {
		bc = append(bc, lit("WindowCalls", s.WindowCalls))
	}
	if s.WindowPeriod > 0 {
		bc = append(bc, g.durationKV("WindowPeriod", s.WindowPeriod))
	}
	if s.FailureRate > 0 {
		bc = append(bc, op("FailureRate", fraction(s.FailureRate)))
	}
	if s.MinimumCalls > 0 {
		bc = append(bc, lit("MinimumCalls", s.MinimumCalls))
	}
	if s.SlowCall > 0 {
		bc = append(bc, g.durationKV("SlowCall", s.SlowCall))
	}
	if s.SlowRate > 0 {
		bc = append(bc, op("SlowRate", fraction(s.SlowRate)))
	}
	if s.InFlight > 0 {
		bc = append(bc, g.durationKV("InFlight", s.InFlight))
	}
	if s.Concurrency > 0 {
		bc = append(bc, lit("Concurrency", s.Concurrency))
	}
	if s.Throttle > 0 {
		bc = append(bc, op("Throttle", fraction(s.Throttle)))
	}
	if s.Rate.Per > 0 {
		items = append(items, op("Rate", strconv.FormatFloat(s.Rate.Per, 'g', -1, 64)), lit("Burst", s.Rate.Burst))
	}
	if r.MaxWait > 0 {
		items = append(items, g.durationKV("MaxWait", r.MaxWait))
	}
	if r.Timeout > 0 {
		items = append(items, g.durationKV("Timeout", r.Timeout))
	}
	if len(r.Exclude) > 0 {
		var ex []jen.Code
		var text []string
		for _, e := range r.Exclude {
			if e.Path == g.local.Path() {
				ex = append(ex, jen.Id(e.Name))
				text = append(text, e.Name)
			} else {
				ex = append(ex, jen.Qual(e.Path, e.Name))
				text = append(text, g.qualText(e.Path, e.Name))
			}
		}
		t := "[]error{" + strings.Join(text, ", ") + "}"
		if slices.Contains(text, "") {
			t = ""
		}
		items = append(items, kv{"Exclude", jen.Index().Error().Values(ex...), t})
	}
	if r.Attempts > 0 {
		items = append(items, lit("Attempts", r.Attempts))
	}
	if r.Backoff.D > 0 {
		items = append(items, g.durationKV("Backoff", r.Backoff.D))
	}
	if r.Backoff.Max > 0 {
		items = append(items, g.durationKV("BackoffMax", r.Backoff.Max))
	}
	if r.Budget > 0 {
		items = append(items, lit("Budget", r.Budget))
	}
	if hedge && r.Hedge > 0 {
		items = append(items, g.durationKV("Hedge", r.Hedge))
		if r.Hedges > 0 {
			items = append(items, lit("Hedges", r.Hedges))
		}
	}
	return bc, items
}

// durationUnits are the units duration and durationText name, largest
// first.
var durationUnits = []struct {
	d    time.Duration
	name string
}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}, {time.Nanosecond, "Nanosecond"}}

// duration renders d in its largest whole unit: 30 * time.Second.
func (g *gen) duration(d time.Duration) jen.Code {
	for _, u := range durationUnits {
		if d%u.d == 0 {
			if d == u.d {
				return jen.Qual("time", u.name)
			}
			return jen.Op(strconv.FormatInt(int64(d/u.d), 10)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Op(strconv.FormatInt(int64(d), 10))
}

// method renders one method of the wrapper, or of the chain.
func (g *gen) method(f *jen.File, in *model.Interface, m *model.Method, recv string, wrapper *jen.Statement, reserved map[string]bool, chain bool, iface jen.Code) {
	impl := in.NextField
	if chain {
		impl = in.PrimaryField
	}
	a, names := g.methodNames(in, m, recv, reserved, chain)
	sig := m.Sig
	n := sig.Params().Len()
	var params, args []jen.Code
	for i := range n {
		v := sig.Params().At(i)
		if sig.Variadic() && i == n-1 {
			params = append(params, jen.Id(names[i]).Op("...").Add(g.tr.typ(v.Type().(*types.Slice).Elem())))
			args = append(args, jen.Id(names[i]).Op("..."))
		} else {
			params = append(params, jen.Id(names[i]).Add(g.tr.typ(v.Type())))
			args = append(args, jen.Id(names[i]))
		}
	}
	call := jen.Id(recv).Dot(impl).Dot(m.Name).Call(args...)
	decl := jen.Func().Params(jen.Id(recv).Op("*").Add(wrapper)).Id(m.Name).Params(params...)

	if m.Route == nil {
		comment(f, fmt.Sprintf("%s calls %s.%s unguarded: %s.", m.Name, impl, m.Name, whyOf(m)))
		res := sig.Results()
		if rnames, errName, ok := errorResultNames(res, a); ok {
			// It can still report a nil wrapped value instead of panicking.
			f.Add(decl.Add(g.tr.results(res, rnames)).Block(
				jen.If(jen.Id(recv).Dot(impl).Op("==").Nil()).Block(
					jen.Id(errName).Op("=").Add(g.impl("ErrNilImpl")),
					jen.Return(),
				),
				jen.Return(call),
			))
			return
		}
		var body jen.Code = jen.Return(call)
		if res.Len() == 0 {
			body = call
		}
		// The results go unnamed: the body names none, and a declared
		// name could collide with the receiver or a type parameter.
		f.Add(decl.Add(g.tr.results(res, make([]string, res.Len()))).Block(body))
		return
	}

	r := m.Route
	errName := a.fresh("err")
	callName := a.fresh("call")
	rnames := make([]string, sig.Results().Len())
	for i := range rnames {
		rnames[i] = "_"
	}
	rnames[len(rnames)-1] = errName
	ctx := ""
	var body []jen.Code
	switch {
	case m.Ctx:
		ctx = names[0]
	case m.CtxFrom > 0:
		ctx = a.fresh("ctx")
		if p, typ, ok := g.nilCtxFrom(m, names); ok {
			body = append(body, jen.If(jen.Id(p).Op("==").Nil()).Block(
				jen.Id(errName).Op("=").Add(g.impl("NilArg")).Call(jen.Lit(in.Name+"."+m.Name), jen.Lit(userParam(m, m.CtxFrom-1, p)), jen.Lit(typ)),
				jen.Return(),
			))
		}
		from := jen.Id(names[m.CtxFrom-1]).Dot("Context").Call()
		if m.CtxSelf {
			// The parameter is a context.Context of another type:
			// converted once, not at every use.
			from = jen.Qual("context", "Context").Call(jen.Id(names[0]))
		}
		body = append(body, jen.Id(ctx).Op(":=").Add(from))
	default:
		ctx = a.fresh("ctx")
		body = append(body, jen.Id(ctx).Op(":=").Qual("context", "Background").Call())
	}
	key := ""
	if m.Key != nil {
		key = a.fresh("k")
		// The plain body (below, past the judged and chained ones) ends
		// the key's hold in its deferred closure, but with a timeout.
		plain := !m.Judged() && !chain && !r.Helper() && !m.UseTimeout
		body = append(body, g.keyed(recv, m, names, key, !plain)...)
	}
	route := routeOf(recv, r, key)
	if m.Judged() {
		g.judged(f, judgedMethod{in: in, m: m, a: a, recv: recv, impl: impl, ctx: ctx, names: names, params: params, args: args, call: call, decl: decl, err: errName, callName: callName, key: key, wrapper: wrapper, chain: chain, iface: iface}, body)
		return
	}
	if chain || r.Helper() {
		t := &tries{in: in, m: m, r: r, a: a, recv: recv, impl: impl, err: errName, call: callName, ctx: ctx, key: key,
			names: names, params: params, args: args, chain: chain, iface: iface}
		g.tries(f, t, decl, wrapper, body)
		return
	}
	// A keyed body holds its key's route first; a client's closes the
	// request's body (or a Post's) when refused; a timeout's ctx may go on
	// in a request.
	if m.Key == nil && (!m.UseTimeout || m.Response == 0 && onCtxRequest(m, names) == "") && !closesBody(m) {
		pb := plainBody{pre: g.plainCtx(in, m, ctx, errName, names), recv: recv, field: r.Field, impl: impl, method: m.Name,
			ctx: ctx, err: errName, cal: callName, names: names, variadic: sig.Variadic(),
			rate: r.Settings.Rate.Per > 0, timeout: m.UseTimeout, background: !m.Ctx && m.CtxFrom == 0, convert: m.CtxSelf}
		if m.UseTimeout && m.CtxFrom > 0 {
			pb.ctxFrom = names[m.CtxFrom-1]
		}
		if mark := g.textBody(pb, a); mark != nil { // the same body, as text
			comment(f, fmt.Sprintf("%s calls %s.%s through breaker %q%s%s.", m.Name, impl, m.Name, r.Name, ctxFromDoc(m, names), answersDoc(m)))
			f.Add(decl.Add(g.tr.results(sig.Results(), rnames)).Block(mark))
			return
		}
	}
	// A plain keyed body without a timeout ends the key's hold itself:
	// the key's Refusal and Enter end it when they refuse.
	releases := key != "" && !m.UseTimeout
	enter, refusal := route.Clone(), jen.Id(callName).Dot("Refusal").Call()
	if releases {
		enter, refusal = jen.Id(key), jen.Id(key).Dot("Refusal").Call(jen.Id(callName))
	}
	if r.Settings.Rate.Per > 0 {
		// Every call waits for a token: EnterFast would always decline.
		body = append(body,
			jen.List(jen.Id(callName), jen.Id(errName)).Op(":=").Add(enter).Dot("Enter").Call(jen.Id(ctx)),
			jen.If(jen.Id(errName).Op("!=").Nil()).Block(append(closeBody(m, names), jen.Return())...),
		)
	} else {
		// EnterFast inlines: a plain CLOSED call costs one load and one
		// test here; Refusal inlines too, so that an OPEN breaker's
		// rejection returns from here, and only the other calls pay for
		// Enter.
		okName := a.fresh("ok")
		fast := route.Clone()
		if key != "" {
			fast = jen.Id(key) // the key's EnterFast reads the key's cell, not the route
		}
		body = append(body,
			jen.List(jen.Id(callName), jen.Id(okName)).Op(":=").Add(fast).Dot("EnterFast").Call(),
			jen.If(jen.Op("!").Id(okName)).Block(
				jen.If(
					jen.Id(errName).Op("=").Add(refusal),
					jen.Id(errName).Op("!=").Nil(),
				).Block(append(closeBody(m, names), jen.Return())...),
				jen.If(
					jen.List(jen.Id(callName), jen.Id(errName)).Op("=").Add(enter.Clone()).Dot("Enter").Call(jen.Id(ctx)),
					jen.Id(errName).Op("!=").Nil(),
				).Block(append(closeBody(m, names), jen.Return())...),
			),
		)
	}
	body = append(body, g.deferDone(m, callName, ctx, errName, key))
	// The guard goes before the timeout, which takes a nil ctx as the
	// background (breakerimpl.WithTimeout), as every guarded call does.
	body = append(body, g.panicGuard(errName))
	if m.UseTimeout {
		resp := ""
		if m.Response > 0 {
			resp = a.fresh("r" + strconv.Itoa(m.Response-1))
			rnames[m.Response-1] = resp
		}
		body = append(body, g.withTimeout(m, a, recv, r, ctx, names, resp)...)
	}
	body = append(body, jen.Return(call))
	// The route's settings are listed in the type's doc, once.
	comment(f, fmt.Sprintf("%s calls %s.%s through %s%s%s.", m.Name, impl, m.Name, breakerDoc(m, names), ctxFromDoc(m, names), answersDoc(m)))
	f.Add(decl.Add(g.tr.results(sig.Results(), rnames)).Block(body...))
}

// answersDoc says which errors of m, a client's method, are answers, not
// failures (model.Method.Answers), or "".
func answersDoc(m *model.Method) string {
	var as []string
	for _, a := range m.Answers {
		as = append(as, a.Text+" ("+a.What+")")
	}
	if len(as) == 0 {
		return ""
	}
	if len(as) > 1 {
		as = []string{strings.Join(as[:len(as)-1], ", ") + " or " + as[len(as)-1]}
	}
	return ". An error matching " + as[0] + " is an answer, not a failure"
}

// methodNames allocates the names of a method's parameters in an
// allocator that then gives the body's locals theirs.
func (g *gen) methodNames(in *model.Interface, m *model.Method, recv string, reserved map[string]bool, chain bool) (*alloc, []string) {
	a := newAlloc(reserved)
	whole := chain || m.StaleField != ""
	// A body that names a request's or a response's helpers (httpguard)
	// reserves the imports too, and so does a keyed one with a timeout,
	// which spells it (time.Minute).
	if whole || m.Route != nil && (m.Judged() || m.Route.Valid != nil || m.Request > 0 || m.Response > 0 || m.Route.Family != nil && m.UseTimeout) {
		// The body names types (a zero value, a stale key, a carrier made
		// for a refusal) and funcs (valid, failure): parameters must not
		// shadow them, nor the packages they come from.
		for _, n := range g.im.names {
			a.taken[n] = true
		}
		for _, n := range in.Obj.Pkg().Scope().Names() {
			a.taken[n] = true
		}
		// A zero value or a stale key may name any predeclared type; a
		// judged body names only these.
		universe := []string{"bool", "error", "false", "new", "true"}
		if whole {
			universe = types.Universe.Names()
		}
		for _, n := range universe {
			a.taken[n] = true
		}
	}
	a.taken[recv] = true
	a.taken["recover"] = true // the plain method's deferred closure calls it
	sig := m.Sig
	n := sig.Params().Len()
	names := make([]string, n)
	// Named parameters keep their names where they can.
	for i := range n {
		v := sig.Params().At(i)
		if v.Name() != "" && v.Name() != "_" && a.free(v.Name()) {
			names[i] = a.fresh(v.Name())
		}
	}
	for i := range n {
		if names[i] != "" {
			continue
		}
		v := sig.Params().At(i)
		switch {
		case v.Name() != "" && v.Name() != "_":
			names[i] = a.fresh(v.Name())
		case i == 0 && m.Ctx:
			names[i] = a.fresh("ctx")
		default:
			names[i] = a.fresh("arg" + strconv.Itoa(i))
		}
	}
	return a, names
}

// deferDone renders the plain method's deferred exit: a closure on one
// line whose guard hands recover's value to Unreturned only while err still
// holds the panic guard, and whose Done inlines, so that a call pays one
// deferred call (a deferred call.Exit(ctx, &err) runs through a wrapper
// that calls Exit: two). A keyed method's closure calls its key's Exit
// (key, the local holding the key), which reads the key's cell where
// Done would read the route, and then ends the key's hold (its Unreturned
// ends it on a panic). A method with a timeout replaces ctx before the
// call, and its exit must see the caller's: it defers Exit, whose
// arguments are taken at once (its cost is the timer's anyway).
func (g *gen) deferDone(m *model.Method, call, ctx, err, key string) jen.Code {
	if m.UseTimeout {
		return jen.Defer().Id(call).Dot("Exit").Call(jen.Id(ctx), jen.Op("&").Id(err))
	}
	guard := jen.Id(err).Op("==").Add(g.impl("PanicGuard")).Op("&&").Id(call).Dot("Unreturned").Call(jen.Id(ctx), jen.Id("recover").Call())
	done := []jen.Code{jen.Id(call).Dot("Done").Call(jen.Id(ctx), jen.Id(err), guard)}
	if key != "" {
		guard = jen.Id(err).Op("==").Add(g.impl("PanicGuard")).Op("&&").Id(key).Dot("Unreturned").Call(jen.Id(call), jen.Id(ctx), jen.Id("recover").Call())
		done = []jen.Code{jen.Id(key).Dot("Exit").Call(jen.Id(call), jen.Id(ctx), jen.Id(err), guard), jen.Id(key).Dot("Done").Call()}
	}
	return jen.Defer().Func().Params().Custom(jen.Options{Open: "{ ", Close: " }", Separator: ";"}, done...).Call()
}

// closeBody renders, for a method taking a *http.Request and answering a
// *http.Response (a RoundTripper, a client's Do), the closing of the
// request's body when the call is refused before any try sent it, as a
// RoundTripper must (httpguard.CloseBody); and for a method taking a body
// as a reader and answering a *http.Response (a client's Post), the
// closing of each body that may be an io.Closer, as http.Client's Post
// closes it (httpguard.CloseReader). Nothing for another method: a reader
// given to any other is its caller's to close.
func closeBody(m *model.Method, names []string) []jen.Code {
	var code []jen.Code
	if clientShaped(m) {
		for _, i := range m.Requests() {
			code = append(code, jen.Qual(HTTPGuardPath, "CloseBody").Call(jen.Id(names[i])).Comment("refused: no try will close it"))
		}
	}
	if m.Response > 0 {
		for _, i := range m.Readers {
			if mayClose(m.Sig.Params().At(i).Type()) {
				code = append(code, jen.Qual(HTTPGuardPath, "CloseReader").Call(jen.Id(names[i])).Comment("refused: no try will close it"))
			}
		}
	}
	return code
}

// mayClose reports whether a body of type t may be an io.Closer: it has
// a Close method, or is an interface whose dynamic value may have one.
func mayClose(t types.Type) bool {
	if types.IsInterface(t) {
		return true
	}
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, "Close")
	_, ok := obj.(*types.Func)
	return ok
}

// closesBody reports whether closeBody renders anything for m: a body is
// closed when the call is refused.
func closesBody(m *model.Method) bool {
	return closeBody(m, make([]string, m.Sig.Params().Len())) != nil
}

// clientShaped reports whether m takes a *http.Request and answers a
// *http.Response.
func clientShaped(m *model.Method) bool { return m.Request > 0 && m.Response > 0 }

// panicGuard renders the line before the guarded call: the error result
// holds breakerimpl.PanicGuard until the call returns, so that the deferred
// Exit can tell a panic from a return without a recover on every call.
func (g *gen) panicGuard(errName string) jen.Code {
	return jen.Id(errName).Op("=").Add(g.impl("PanicGuard")).Comment("stays only if the call panics")
}

// durations reports whether s renders a time.Duration.
func durations(s model.Settings) bool {
	return s.Reset > 0 || s.WindowPeriod > 0 || s.SlowCall > 0 || s.InFlight > 0
}

// fraction renders a float64 setting as the shortest literal that reads
// back as f: 0.5, 0.025, 2.
func fraction(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// shortDuration formats d without zero trailing units: 24h, 1m30s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// whyOf is why m is unguarded, in words.
func whyOf(m *model.Method) string {
	if m.Why == "noerror" {
		return "it " + m.NoErrorWhy()
	}
	return why(m.Why)
}

func why(w string) string {
	switch w {
	case "skip":
		return "//breaker:skip says so"
	case "noerror":
		return "it has no error result to report failures with"
	case "noroute":
		return "no //breaker: line routes it"
	case "local":
		return "it is go-redis's and takes no context.Context, so it sends nothing to Redis (it builds its answer locally), and its error, a client's that does not support it, is no failure of Redis"
	}
	return w
}

func routeExtras(r *model.Route, m *model.Method) string {
	var parts []string
	if r.Family != nil {
		keys := r.Settings.Keys
		if keys == 0 {
			keys = bgruntime.DefaultFamilyKeys
		}
		parts = append(parts, fmt.Sprintf("at most %d keys live", keys))
		if r.Settings.MaxOpen > 0 {
			parts = append(parts, fmt.Sprintf("at most %d%% of them out of CLOSED", r.Settings.MaxOpen))
		}
	}
	if r.Settings.Rate.Per > 0 {
		parts = append(parts, fmt.Sprintf("limiter %s/s burst %d", strconv.FormatFloat(r.Settings.Rate.Per, 'g', -1, 64), r.Settings.Rate.Burst))
	}
	if r.Settings.Concurrency > 0 {
		parts = append(parts, fmt.Sprintf("at most %d in flight", r.Settings.Concurrency))
	}
	if r.Settings.Throttle > 0 {
		parts = append(parts, "throttle "+fraction(r.Settings.Throttle))
	}
	if r.MaxWait > 0 {
		parts = append(parts, "maxwait "+r.MaxWait.String())
	}
	if r.Timeout > 0 && (m == nil || m.UseTimeout) {
		parts = append(parts, "timeout "+r.Timeout.String())
	}
	if len(r.Exclude) > 0 {
		var ex []string
		for _, e := range r.Exclude {
			ex = append(ex, e.Text)
		}
		parts = append(parts, "excluding "+strings.Join(ex, ", "))
	}
	if r.Attempts > 1 {
		parts = append(parts, fmt.Sprintf("%d attempts", r.Attempts))
	}
	if r.Backoff.D > 0 {
		parts = append(parts, "backoff "+r.Backoff.String())
	}
	if r.Budget > 0 {
		parts = append(parts, fmt.Sprintf("budget %d", r.Budget))
	}
	if r.Valid != nil {
		parts = append(parts, "valid "+r.Valid.Text)
	}
	if r.Failure != nil {
		parts = append(parts, "failure "+r.Failure.Text)
	}
	if r.Stale > 0 {
		parts = append(parts, "stale "+shortDuration(r.Stale))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func wrapperDoc(in *model.Interface) []string {
	article := articleFor(in.Name)
	create := wrap(fmt.Sprintf("Create it with %s; the zero value is not usable. It is safe for concurrent use when the wrapped %s is.", in.Ctor, in.Name))
	if len(in.Methods) == 0 {
		// No list to introduce: an empty one reads as a doc cut short.
		lines := wrap(fmt.Sprintf("%s is %s %s, an interface with no methods to guard.", in.Wrapper, article, in.Name))
		return append(append(lines, ""), create...)
	}
	lines := wrap(fmt.Sprintf("%s is %s %s whose methods go through circuit breakers:", in.Wrapper, article, in.Name))
	// One item per way through: the methods that share a breaker and its
	// settings are listed together, in method order.
	var keys []string
	byKey := map[string][]string{}
	for _, m := range in.Methods {
		key := fmt.Sprintf("unguarded (%s)", shortWhy(m.Why))
		switch {
		case m.Key != nil:
			var names []string
			for v := range m.Sig.Params().Variables() {
				names = append(names, v.Name())
			}
			k := keyText(m, names)
			key = fmt.Sprintf("breakers %q, one per %s%s", m.Route.Name+"/<"+k+">", k, routeExtras(m.Route, m))
		case m.Route != nil:
			key = fmt.Sprintf("breaker %q%s", m.Route.Name, routeExtras(m.Route, m))
		}
		if _, ok := byKey[key]; !ok {
			keys = append(keys, key)
		}
		byKey[key] = append(byKey[key], m.Name)
	}
	lines = append(lines, "")
	for _, k := range keys {
		lines = append(lines, bullet(strings.Join(byKey[k], ", ")+": "+k)...)
	}
	lines = append(lines, "")
	return append(lines, create...)
}

// articleFor returns "an" or "a" for name, as a reader says it: a name of
// one letter, or one that starts with an upper-case letter followed by
// another or a digit (an initialism: HTTPSource, S3Store), is read letter
// by letter, and takes "an" when that letter's name starts with a vowel
// sound (A E F H I L M N O R S X: an F, an HTTPSource, a URLSource); any
// other name takes "an" when it starts with a vowel (an Item, a Quote),
// but for the common words read with a consonant first (a User, a
// Unit, a Utility, a Euro, a OneShot). It is a simple rule: a word such
// as Hour is not told apart.
func articleFor(name string) string {
	first, n := utf8.DecodeRuneInString(name)
	second, _ := utf8.DecodeRuneInString(name[n:])
	vowels := "AEIOU"
	if n == len(name) || unicode.IsUpper(first) && (unicode.IsUpper(second) || unicode.IsDigit(second)) {
		vowels = "AEFHILMNORSX"
	} else {
		low := strings.ToLower(name)
		for _, p := range []string{"us", "unit", "uniq", "univ", "unif", "unio", "unic", "uti", "ura", "uro", "eu", "one", "once"} {
			if strings.HasPrefix(low, p) {
				return "a"
			}
		}
	}
	if strings.ContainsRune(vowels, unicode.ToUpper(first)) {
		return "an"
	}
	return "a"
}

func shortWhy(w string) string {
	switch w {
	case "skip":
		return "skip"
	case "noerror":
		return "no error result"
	case "noroute":
		return "no route"
	case "local":
		return "go-redis's, local"
	}
	return w
}

// alloc hands out identifiers that are unique within one function.
type alloc struct{ taken map[string]bool }

// pkgAlloc is an allocator for the names of a declaration's own (a
// constructor's parameters and locals) that keeps clear of reserved and
// of every name declared in in's package: the declaration may spell one (a
// stale cache's key or value type, the wrapped interface), and a
// parameter or a receiver of that name would hide it (GENERATOR-CASES 15).
func pkgAlloc(in *model.Interface, reserved map[string]bool) *alloc {
	a := newAlloc(reserved)
	for _, n := range in.Obj.Pkg().Scope().Names() {
		a.taken[n] = true
	}
	return a
}

// receiverAlloc is the allocator of the receiver's name, one for every
// method of in's wrapper and chain: a pkgAlloc that keeps clear of every
// parameter's name too. A method's body may name any type of its
// package (a zero value, a stale key), which a receiver of the same name
// would hide from the whole body.
func receiverAlloc(in *model.Interface, reserved map[string]bool) *alloc {
	a := pkgAlloc(in, reserved)
	for _, m := range in.Methods {
		for v := range m.Sig.Params().Variables() {
			a.taken[v.Name()] = true
		}
	}
	return a
}

func newAlloc(reserved map[string]bool) *alloc {
	a := &alloc{taken: map[string]bool{}}
	for n := range reserved {
		a.taken[n] = true
	}
	return a
}

func (a *alloc) free(n string) bool {
	return !a.taken[n] && !token.IsKeyword(n) && n != "_"
}

// fresh returns want, or want2, want3... if it is taken.
func (a *alloc) fresh(want string) string {
	n := want
	for i := 2; !a.free(n); i++ {
		n = want + strconv.Itoa(i)
	}
	a.taken[n] = true
	return n
}

// wrap breaks prose into comment lines of at most 76 characters, so that
// with "// " in front they fit in 80 columns.
func wrap(s string) []string { return textwrap.Lines(s, 76) }

// bullet renders s as an item of a comment's list, "  - " then the text,
// its continuation lines indented under it.
func bullet(s string) []string {
	lines := textwrap.Lines(s, 72)
	for i := range lines {
		if i == 0 {
			lines[i] = "  - " + lines[i]
		} else {
			lines[i] = "    " + lines[i]
		}
	}
	return lines
}

// groupImports puts the standard library's imports in a group of their own,
// as goimports does; jennifer sorts them all into one.
func groupImports(src []byte) []byte {
	start := bytes.Index(src, []byte("\nimport (\n"))
	if start < 0 {
		return src
	}
	start += len("\nimport (\n")
	end := bytes.Index(src[start:], []byte("\n)\n"))
	if end < 0 {
		return src
	}
	end += start
	var std, other []string
	for _, l := range strings.Split(string(src[start:end]), "\n") {
		q := strings.Index(l, `"`)
		if q < 0 {
			continue
		}
		p := strings.Trim(l[q:], `"`)
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			other = append(other, l)
		} else {
			std = append(std, l)
		}
	}
	if len(std) == 0 || len(other) == 0 {
		return src
	}
	block := strings.Join(std, "\n") + "\n\n" + strings.Join(other, "\n")
	return slices.Concat(src[:start], []byte(block), src[end:])
}
