package model

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/tools/go/packages"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
)

// Options filter a run.
type Options struct {
	// Types, if not empty, names the only interfaces to emit.
	Types []string
}

type builder struct {
	fset      *token.FileSet
	opts      Options
	outputs   map[string]bool
	run       *Run
	files     map[string]*File // by output path
	names     map[string]*nameInfo
	nameList  []string
	routes    []*pendingRoute
	found     map[string]bool                      // -type names found
	generated map[string]map[string]token.Position // pkg id → generated top-level names
}

// nameInfo gathers the name-level settings given for one breaker name.
type nameInfo struct {
	given map[string]annotation.Option // key → first option giving it
}

// pendingRoute is a route whose settings are resolved once every line of
// the run has been seen.
type pendingRoute struct {
	r       *Route
	maxwait *annotation.Option
	scope   *types.Scope
	pkg     *types.Package
	exclude *annotation.Option
}

func (b *builder) errorf(pos token.Position, format string, args ...any) {
	b.run.Errors = append(b.run.Errors, annotation.Errorf(pos, format, args...))
}

func (b *builder) warnf(pos token.Position, format string, args ...any) {
	b.run.Warnings = append(b.run.Warnings, annotation.Errorf(pos, "warning: "+format, args...))
}

// Build works out the run from the loaded packages.
func Build(res *load.Result, opts Options) *Run {
	b := &builder{
		fset:      res.Fset,
		opts:      opts,
		outputs:   res.Outputs,
		run:       &Run{Sources: map[string]bool{}},
		files:     map[string]*File{},
		names:     map[string]*nameInfo{},
		found:     map[string]bool{},
		generated: map[string]map[string]token.Position{},
	}
	for _, pat := range res.Unmatched {
		b.errorf(token.Position{}, "pattern %s matched no packages", pat)
	}
	for _, p := range res.Packages {
		b.packageErrors(p)
	}
	for _, p := range res.Packages {
		if strings.HasSuffix(p.ID, ".test") || p.Types == nil {
			continue
		}
		for _, f := range p.Syntax {
			name := b.fset.File(f.Pos()).Name()
			if b.run.Sources[name] || b.outputs[name] {
				continue
			}
			if p.Dir != "" && filepath.Dir(name) != p.Dir {
				// A file the go command made (cgo's output, in its cache):
				// not the user's source, and no place to write.
				b.cgoFile(f)
				continue
			}
			b.run.Sources[name] = true
			b.file(p, f, name)
		}
	}
	b.resolve()
	for _, t := range opts.Types {
		if !b.found[t] {
			b.errorf(token.Position{}, "-type %s: no annotated interface of that name in the packages loaded", t)
		}
	}
	for _, f := range b.files {
		for n := range b.generated[f.PkgPath] {
			f.Reserved[n] = true
		}
		slices.SortFunc(f.Interfaces, func(x, y *Interface) int { return cmp.Compare(x.Name, y.Name) })
		b.run.Files = append(b.run.Files, f)
	}
	slices.SortFunc(b.run.Files, func(x, y *File) int { return cmp.Compare(x.Path, y.Path) })
	annotation.SortErrors(b.run.Errors)
	annotation.SortErrors(b.run.Warnings)
	b.run.Errors = slices.CompactFunc(b.run.Errors, func(x, y *annotation.Error) bool { return x.Error() == y.Error() })
	return b.run
}

// packageErrors reports the errors that stop a run: the go command's and
// the parser's. Type errors are checked per annotated interface.
func (b *builder) packageErrors(p *packages.Package) {
	for _, e := range p.Errors {
		if e.Kind == packages.ListError && strings.HasPrefix(e.Msg, "# ") {
			// The go command's compile output for the package: the same
			// type errors, checked per annotated interface.
			continue
		}
		switch e.Kind {
		case packages.ListError, packages.ParseError, packages.UnknownError:
			b.run.Errors = append(b.run.Errors, &annotation.Error{Pos: parsePos(e.Pos), Msg: e.Msg})
		}
	}
}

func parsePos(s string) token.Position {
	// file:line:col, file:line or "" / "-".
	var p token.Position
	parts := strings.Split(s, ":")
	nums := []int{}
	for len(parts) > 1 && len(nums) < 2 {
		n, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		parts = parts[:len(parts)-1]
	}
	if len(nums) == 0 || s == "" || s == "-" {
		return p
	}
	p.Filename = strings.Join(parts, ":")
	p.Line = nums[0]
	if len(nums) > 1 {
		p.Column = nums[1]
	}
	return p
}

// file scans one source file for annotated interfaces.
func (b *builder) file(p *packages.Package, f *ast.File, name string) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				b.strayLines(d.Doc, d.Tok.String())
				continue
			}
			for _, s := range d.Specs {
				ts := s.(*ast.TypeSpec)
				var lines []*annotation.Line
				for _, doc := range []*ast.CommentGroup{d.Doc, ts.Doc} {
					if doc == nil || (doc == d.Doc && d.Lparen.IsValid()) {
						continue
					}
					ls, errs, warns := annotation.Scan(b.fset, doc, annotation.OnInterface)
					lines = append(lines, ls...)
					b.run.Errors = append(b.run.Errors, errs...)
					b.run.Warnings = append(b.run.Warnings, warns...)
				}
				mlines := b.methodLines(ts)
				if len(lines) == 0 && len(mlines) == 0 {
					continue
				}
				// Every annotated interface is modelled, so that a -type
				// run resolves shared names like a full run; only the
				// selected ones are emitted.
				emit := len(b.opts.Types) == 0 || slices.Contains(b.opts.Types, ts.Name.Name)
				if emit {
					b.found[ts.Name.Name] = true
				}
				b.iface(p, f, name, ts, lines, mlines, emit)
			}
			if d.Lparen.IsValid() && d.Doc != nil {
				ls, _, _ := annotation.Scan(b.fset, d.Doc, annotation.OnInterface)
				for _, l := range ls {
					b.errorf(l.Pos, "//breaker: on a type ( ... ) group annotates nothing; put it on each interface's own doc comment")
				}
			}
		case *ast.FuncDecl:
			b.strayLines(d.Doc, "func")
			if d.Body == nil {
				continue
			}
			ast.Inspect(d.Body, func(n ast.Node) bool {
				gd, ok := n.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					return true
				}
				for _, s := range gd.Specs {
					ts := s.(*ast.TypeSpec)
					docs := []*ast.CommentGroup{ts.Doc}
					if !gd.Lparen.IsValid() {
						docs = append(docs, gd.Doc)
					}
					for _, doc := range docs {
						ls, _, _ := annotation.Scan(b.fset, doc, annotation.OnInterface)
						if len(ls) > 0 || len(b.methodLines(ts)) > 0 {
							b.errorf(b.fset.Position(ts.Name.Pos()), "%s is declared inside a function: only package-level interfaces can be wrapped", ts.Name.Name)
							break
						}
					}
				}
				return true
			})
		}
	}
}

// methodLines scans the doc comments inside an interface literal.
func (b *builder) methodLines(ts *ast.TypeSpec) map[string]*annotation.Line {
	it, ok := ts.Type.(*ast.InterfaceType)
	if !ok || it.Methods == nil {
		return nil
	}
	out := map[string]*annotation.Line{}
	for _, field := range it.Methods.List {
		ls, errs, warns := annotation.Scan(b.fset, field.Doc, annotation.OnMethod)
		b.run.Errors = append(b.run.Errors, errs...)
		b.run.Warnings = append(b.run.Warnings, warns...)
		if field.Comment != nil {
			for _, c := range field.Comment.List {
				if strings.HasPrefix(c.Text, annotation.Prefix) {
					b.warnf(b.fset.Position(c.Slash), "a //breaker: line after a method annotates nothing; put it on its own line above the method")
				}
			}
		}
		if len(ls) == 0 {
			continue
		}
		if len(field.Names) == 0 {
			b.errorf(ls[0].Pos, "//breaker: on an embedded interface or type term annotates nothing; annotate methods or the interface")
			continue
		}
		for _, l := range ls[1:] {
			b.errorf(l.Pos, "%s.%s: a method takes one //breaker: line (the first is at line %d)", ts.Name.Name, field.Names[0].Name, ls[0].Pos.Line)
		}
		out[field.Names[0].Name] = ls[0]
	}
	return out
}

// outputPath is where the wrappers of interfaces declared in src go.
func outputPath(src string) string {
	dir, base := filepath.Split(src)
	if s, ok := strings.CutSuffix(base, "_test.go"); ok {
		return filepath.Join(dir, s+"_breaker_test.go")
	}
	return filepath.Join(dir, strings.TrimSuffix(base, ".go")+"_breaker.go")
}

func (b *builder) iface(p *packages.Package, f *ast.File, src string, ts *ast.TypeSpec, lines []*annotation.Line, mlines map[string]*annotation.Line, emit bool) {
	pos := b.fset.Position(ts.Name.Pos())
	name := ts.Name.Name
	obj, _ := p.TypesInfo.Defs[ts.Name].(*types.TypeName)
	if obj == nil {
		b.errorf(pos, "%s: no type information (see the package's errors)", name)
		return
	}
	// Type errors inside the declaration stop it; others do not.
	start, end := b.fset.Position(ts.Pos()), b.fset.Position(ts.End())
	bad := false
	for _, e := range p.Errors {
		if e.Kind != packages.TypeError {
			continue
		}
		ep := parsePos(e.Pos)
		if ep.Filename == start.Filename && ep.Line >= start.Line && ep.Line <= end.Line {
			b.run.Errors = append(b.run.Errors, &annotation.Error{Pos: ep, Msg: e.Msg})
			bad = true
		}
	}
	if bad {
		return
	}
	t := types.Unalias(obj.Type())
	it, ok := t.Underlying().(*types.Interface)
	if !ok {
		b.errorf(pos, "%s is not an interface: //breaker: annotates interfaces only", name)
		return
	}
	if !it.IsMethodSet() {
		b.errorf(pos, "%s is a constraint interface (it has a type set), not a method set: it cannot be wrapped", name)
		return
	}
	if a, ok := obj.Type().(*types.Alias); ok && a.TypeParams().Len() > 0 {
		b.errorf(pos, "%s is a generic alias: annotate the interface it stands for", name)
		return
	}
	in := &Interface{
		Name:    name,
		Wrapper: name + "Breaker",
		Ctor:    "New" + name + "Breaker",
		Obj:     obj,
		Pos:     pos,
	}
	if n, ok := obj.Type().(*types.Named); ok && n.TypeParams().Len() > 0 {
		in.TypeParams = n.TypeParams()
	}
	in.ChainType, in.ChainCtor = name+"Chain", "New"+name+"Chain"
	if !ast.IsExported(name) {
		in.Wrapper = lowerFirst(name) + "Breaker"
		in.Ctor = "new" + upperFirst(name) + "Breaker"
		in.ChainType, in.ChainCtor = lowerFirst(name)+"Chain", "new"+upperFirst(name)+"Chain"
	}
	for _, l := range lines {
		if l.Has("chain") {
			in.Chain = true
		}
	}
	ids := []string{in.Wrapper, in.Ctor}
	if in.Chain {
		ids = append(ids, in.ChainType, in.ChainCtor)
	}
	pkg := p.Types
	// Generated names must be free in the destination package.
	// An internal test package shares its namespace with the package.
	gen := b.generated[pkg.Path()]
	if gen == nil {
		gen = map[string]token.Position{}
		b.generated[pkg.Path()] = gen
	}
	for _, id := range ids {
		if o := pkg.Scope().Lookup(id); o != nil && !b.outputs[b.fset.Position(o.Pos()).Filename] {
			b.errorf(pos, "%s: cannot generate %s: the package already declares it at %s", name, id, b.fset.Position(o.Pos()))
			return
		}
		if prev, ok := gen[id]; ok {
			b.errorf(pos, "%s: cannot generate %s: it is also generated for the interface at %s", name, id, prev)
			return
		}
	}
	for _, id := range ids {
		gen[id] = pos
	}

	var methods []*types.Func
	for m := range it.Methods() {
		methods = append(methods, m)
	}
	slices.SortFunc(methods, func(x, y *types.Func) int { return cmp.Compare(x.Name(), y.Name()) })
	okAll := true
	for _, m := range methods {
		if !m.Exported() && m.Pkg() != pkg {
			b.errorf(pos, "%s: method %s comes from package %s, where it is unexported: no type outside that package can implement it", name, m.Name(), m.Pkg().Path())
			okAll = false
			continue
		}
		if bad := foreignUnexported(m.Type(), pkg); bad != "" {
			b.errorf(pos, "%s: method %s uses %s, which is unexported in its package: the wrapper cannot name it", name, m.Name(), bad)
			okAll = false
		}
		if invalid(m.Type()) {
			b.errorf(pos, "%s: method %s has an invalid type; fix the package's type errors first", name, m.Name())
			okAll = false
		}
	}
	for mname, l := range mlines {
		if !slices.ContainsFunc(methods, func(m *types.Func) bool { return m.Name() == mname }) {
			b.errorf(l.Pos, "%s: method %s not found in the method set", name, mname)
			okAll = false
		}
	}
	if !okAll {
		return
	}

	// The interface's lines: routes by methods globs, and one default.
	defaultName := strings.ToLower(name)
	type ifaceLine struct {
		l     *annotation.Line
		route *Route
		globs []string
	}
	var ils []*ifaceLine
	var dflt *ifaceLine
	scope := fileScope(p, f)
	for i, l := range lines {
		il := &ifaceLine{l: l}
		il.route, _ = b.newRoute(l, defaultName, nil, scope, pkg)
		il.route.order = i
		if o, ok := l.Get("methods"); ok {
			il.globs = o.Value.([]string)
			for i, g := range il.globs {
				if !slices.ContainsFunc(methods, func(m *types.Func) bool { return annotation.Match(g, m.Name()) }) {
					b.errorf(o.ItemPos(i), "methods: %q matches no method of %s", g, name)
				}
			}
		} else if dflt != nil {
			b.errorf(l.Pos, "%s: a second line without methods=; only one line can be the default route (the first is at line %d)", name, dflt.l.Pos.Line)
			continue
		} else {
			dflt = il
			in.Default = il.route
		}
		ils = append(ils, il)
	}
	used := map[*Route]bool{}
	for _, m := range methods {
		sig := m.Type().(*types.Signature)
		mm := &Method{Name: m.Name(), Sig: sig, Ctx: firstIsContext(sig)}
		in.Methods = append(in.Methods, mm)
		var base *ifaceLine
		for _, il := range ils {
			if il.globs != nil && slices.ContainsFunc(il.globs, func(g string) bool { return annotation.Match(g, m.Name()) }) {
				base = il
				break
			}
		}
		if base == nil {
			base = dflt
		}
		ml := mlines[m.Name()]
		hasErr := lastIsError(sig)
		switch {
		case ml != nil && ml.Skip():
			mm.Why = "skip"
			continue
		case !hasErr:
			if ml != nil {
				b.errorf(ml.Pos, "%s.%s: the last result is not error, so the method cannot report a failure or a rejection and cannot be guarded; remove the line or write //breaker:skip", name, m.Name())
			}
			mm.Why = "noerror"
			continue
		case ml != nil:
			var inherit *Route
			if base != nil {
				inherit = base.route
			}
			r, _ := b.newRoute(ml, defaultName, inherit, scope, pkg)
			r.Method = m.Name()
			r.order = len(lines) + len(in.Routes)
			mm.Route = r
			in.Routes = append(in.Routes, r)
			used[r] = true
			if o, ok := ml.Get("timeout"); ok && !mm.Ctx {
				b.errorf(o.Pos, "%s.%s: timeout: the method has no context.Context first parameter to carry a deadline", name, m.Name())
			}
		case base != nil:
			mm.Route = base.route
			if !used[base.route] {
				used[base.route] = true
				in.Routes = append(in.Routes, base.route)
			}
		default:
			mm.Why = "noroute"
			continue
		}
		b.checkResults(in, mm)
		if mm.Route.Timeout > 0 {
			if mm.Ctx {
				mm.UseTimeout = true
			} else if ml == nil || !ml.Has("timeout") {
				mpos := b.fset.Position(m.Pos())
				if mpos.Filename != src {
					mpos = pos // an embedded method declared elsewhere
				}
				b.warnf(mpos, "%s.%s: timeout=%s of breaker %q has no effect: the method has no context.Context first parameter", name, m.Name(), mm.Route.Timeout, mm.Route.Name)
			}
		}
	}
	slices.SortStableFunc(in.Routes, func(x, y *Route) int { return cmp.Compare(x.order, y.order) })
	b.fieldNames(in)
	if !emit {
		return
	}

	out := outputPath(src)
	file := b.files[out]
	if file == nil {
		file = &File{
			Path:     out,
			Source:   src,
			Build:    load.BuildLine(f),
			PkgName:  pkg.Name(),
			PkgPath:  pkg.Path(),
			Reserved: map[string]bool{},
		}
		b.files[out] = file
	}
	for _, n := range pkg.Scope().Names() {
		file.Reserved[n] = true
	}
	file.Interfaces = append(file.Interfaces, in)
}

// newRoute makes the route of one line. A line without name takes the name
// of inherit (a method line) or the interface's default name, and the line
// keys of inherit that it does not give itself.
func (b *builder) newRoute(l *annotation.Line, defaultName string, inherit *Route, scope *types.Scope, pkg *types.Package) (*Route, *pendingRoute) {
	r := &Route{Name: defaultName, Pos: l.Pos}
	pr := &pendingRoute{r: r, scope: scope, pkg: pkg}
	if inherit != nil {
		r.Name = inherit.Name
		r.Timeout, r.MaxWait, r.Exclude = inherit.Timeout, inherit.MaxWait, inherit.Exclude
		r.Attempts, r.Backoff, r.Budget = inherit.Attempts, inherit.Backoff, inherit.Budget
		r.Valid, r.validFunc, r.validOpt = inherit.Valid, inherit.validFunc, inherit.validOpt
		r.Stale, r.StaleSize, r.staleOpt = inherit.Stale, inherit.StaleSize, inherit.staleOpt
		for _, p := range b.routes {
			if p.r == inherit {
				if l.Has("maxwait") {
					break
				}
				pr.maxwait = p.maxwait
			}
		}
	}
	if o, ok := l.Get("name"); ok {
		r.Name = o.Value.(string)
	}
	ni := b.names[r.Name]
	if ni == nil {
		ni = &nameInfo{given: map[string]annotation.Option{}}
		b.names[r.Name] = ni
		b.nameList = append(b.nameList, r.Name)
	}
	for _, o := range l.Options {
		switch o.Key {
		case "timeout":
			r.Timeout = o.Value.(time.Duration)
		case "maxwait":
			r.MaxWait = o.Value.(time.Duration)
			pr.maxwait = &o
		case "exclude":
			pr.exclude = &o
			r.Exclude = nil
		case "attempts":
			r.Attempts = o.Value.(int)
		case "backoff":
			r.Backoff = o.Value.(annotation.Backoff)
		case "budget":
			r.Budget = o.Value.(int)
		case "valid":
			r.Valid, r.validFunc, r.validOpt = nil, nil, nil
			if o.Raw == "-" {
				if l.Where == annotation.OnInterface {
					b.errorf(o.Pos, "valid: - clears a valid func a method inherits; on an interface line, leave valid out")
				}
				break
			}
			r.validOpt = &o
			if f := b.resolveValid(&o, scope, pkg); f != nil {
				r.validFunc = f
				r.Valid = &Ref{Path: f.Pkg().Path(), Name: f.Name(), Text: o.Raw}
			}
		case "stale":
			r.Stale, r.staleOpt = o.Value.(time.Duration), &o
			if r.Stale == 0 {
				r.staleOpt = nil
				if l.Where == annotation.OnInterface {
					b.errorf(o.Pos, "stale: 0 clears a stale cache a method inherits; on an interface line, leave stale out")
				}
			}
		case "stalesize":
			r.StaleSize = o.Value.(int)
		}
		if annotation.KeyScope(o.Key) != annotation.NameScope {
			continue
		}
		if prev, ok := ni.given[o.Key]; ok {
			if fmt.Sprint(prev.Value) != fmt.Sprint(o.Value) {
				b.errorf(o.Pos, "breaker %q: %s=%s conflicts with %s=%s given at %s", r.Name, o.Key, o.Raw, prev.Key, prev.Raw, prev.Pos)
			}
			continue
		}
		ni.given[o.Key] = o
	}
	if pr.exclude != nil {
		r.Exclude = b.resolveExclude(pr.exclude, scope, pkg)
	}
	if o, ok := l.Get("stalesize"); ok && r.Stale == 0 {
		b.errorf(o.Pos, "stalesize: there is no stale cache to size; give stale=D too")
	}
	if r.Stale == 0 {
		r.StaleSize = 0
	}
	b.routes = append(b.routes, pr)
	return r, pr
}

// resolve fills in every route's name-level settings from the whole run.
func (b *builder) resolve() {
	for _, pr := range b.routes {
		r := pr.r
		ni := b.names[r.Name]
		s := &r.Settings
		for k, o := range ni.given {
			switch k {
			case "threshold":
				s.Threshold = o.Value.(int)
			case "reset":
				s.Reset = o.Value.(time.Duration)
			case "halfopen":
				s.HalfOpen = o.Value.(int)
			case "successes":
				s.Successes = o.Value.(int)
			case "ratelimit":
				s.Rate = o.Value.(annotation.Rate)
			}
		}
		if pr.maxwait != nil && s.Rate.Per == 0 {
			b.errorf(pr.maxwait.Pos, "maxwait: breaker %q has no ratelimit, so there is no token to wait for", r.Name)
		}
	}
}

// resolveExclude resolves exclude's identifiers in the file scope of the
// interface: each must be a package-level value whose type implements error.
func (b *builder) resolveExclude(o *annotation.Option, scope *types.Scope, pkg *types.Package) []Ref {
	var refs []Ref
	errType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	for i, id := range o.Value.([]string) {
		pos := o.ItemPos(i)
		var obj types.Object
		if q, sel, ok := strings.Cut(id, "."); ok {
			pn, _ := lookup(scope, q).(*types.PkgName)
			if pn == nil {
				b.errorf(pos, "exclude: %s: %s is not an imported package in this file", id, q)
				continue
			}
			obj = pn.Imported().Scope().Lookup(sel)
			if obj == nil || !obj.Exported() {
				b.errorf(pos, "exclude: %s: package %s has no exported %s", id, pn.Imported().Path(), sel)
				continue
			}
		} else {
			obj = lookup(scope, id)
			if obj == nil {
				b.errorf(pos, "exclude: %s: undefined", id)
				continue
			}
			if obj.Parent() != pkg.Scope() {
				b.errorf(pos, "exclude: %s: not a package-level value of %s", id, pkg.Name())
				continue
			}
		}
		switch obj.(type) {
		case *types.Var, *types.Const:
		default:
			b.errorf(pos, "exclude: %s is not a variable or constant (it is a %s)", id, kind(obj))
			continue
		}
		if !types.Implements(obj.Type(), errType) {
			b.errorf(pos, "exclude: %s is not an error: its type %s does not implement error", id, types.TypeString(obj.Type(), types.RelativeTo(pkg)))
			continue
		}
		refs = append(refs, Ref{Path: obj.Pkg().Path(), Name: obj.Name(), Text: id})
	}
	return refs
}

// resolveValid resolves valid's identifier in the file scope of the
// interface: a package-level func, not generic. Whether its signature fits
// is checked per method ([builder.checkResults]).
func (b *builder) resolveValid(o *annotation.Option, scope *types.Scope, pkg *types.Package) *types.Func {
	id := o.Raw
	var obj types.Object
	if q, sel, ok := strings.Cut(id, "."); ok {
		pn, _ := lookup(scope, q).(*types.PkgName)
		if pn == nil {
			b.errorf(o.Pos, "valid: %s: %s is not an imported package in this file", id, q)
			return nil
		}
		obj = pn.Imported().Scope().Lookup(sel)
		if obj == nil || !obj.Exported() {
			b.errorf(o.Pos, "valid: %s: package %s has no exported %s", id, pn.Imported().Path(), sel)
			return nil
		}
	} else {
		obj = lookup(scope, id)
		if obj == nil {
			b.errorf(o.Pos, "valid: %s: undefined", id)
			return nil
		}
		if obj.Parent() != pkg.Scope() {
			b.errorf(o.Pos, "valid: %s: not a package-level func of %s", id, pkg.Name())
			return nil
		}
	}
	f, ok := obj.(*types.Func)
	if !ok {
		b.errorf(o.Pos, "valid: %s is not a func (it is a %s)", id, kind(obj))
		return nil
	}
	if f.Type().(*types.Signature).TypeParams().Len() > 0 {
		b.errorf(o.Pos, "valid: %s is generic; name a func of the results' own types", id)
		return nil
	}
	return f
}

// checkResults checks that the valid func and the stale cache of m's route
// fit m. The errors are at the key, which may be on the interface's line.
func (b *builder) checkResults(in *Interface, m *Method) {
	r := m.Route
	res := m.Sig.Results()
	var want []types.Type
	for i := range res.Len() - 1 {
		want = append(want, res.At(i).Type())
	}
	qual := types.RelativeTo(in.Obj.Pkg())
	if r.validFunc != nil {
		sig := r.validFunc.Type().(*types.Signature)
		fits := !sig.Variadic() && sig.Params().Len() == len(want) && sig.Results().Len() == 1 &&
			types.Identical(sig.Results().At(0).Type().Underlying(), types.Typ[types.Bool])
		for i := 0; fits && i < len(want); i++ {
			fits = types.AssignableTo(want[i], sig.Params().At(i).Type())
		}
		if !fits {
			var ts []string
			for _, t := range want {
				ts = append(ts, types.TypeString(t, qual))
			}
			b.errorf(r.validOpt.Pos, "valid: %s is %s; %s.%s needs func(%s) bool", r.Valid.Text,
				types.TypeString(sig, qual), in.Name, m.Name, strings.Join(ts, ", "))
		}
	}
	if r.Stale > 0 && r.staleOpt != nil {
		if len(want) == 0 {
			b.errorf(r.staleOpt.Pos, "stale: %s.%s returns only an error: there is no result to keep", in.Name, m.Name)
			return
		}
		for i := range m.Sig.Params().Len() {
			v := m.Sig.Params().At(i)
			if i == 0 && m.Ctx {
				continue
			}
			if !types.Comparable(v.Type()) {
				what := "argument " + strconv.Itoa(i+1)
				if v.Name() != "" && v.Name() != "_" {
					what = "argument " + v.Name()
				}
				b.errorf(r.staleOpt.Pos, "stale: %s.%s: %s of type %s is not comparable, so it cannot key the cache", in.Name, m.Name, what, types.TypeString(v.Type(), qual))
				return
			}
		}
	}
}

func kind(o types.Object) string {
	switch o.(type) {
	case *types.TypeName:
		return "type"
	case *types.Func:
		return "func"
	case *types.PkgName:
		return "package"
	case *types.Builtin:
		return "builtin"
	case *types.Var:
		return "variable"
	case *types.Const:
		return "constant"
	}
	return "other object"
}

func lookup(scope *types.Scope, name string) types.Object {
	for s := scope; s != nil; s = s.Parent() {
		if o := s.Lookup(name); o != nil {
			return o
		}
	}
	return nil
}

func fileScope(p *packages.Package, f *ast.File) *types.Scope {
	if s := p.TypesInfo.Scopes[f]; s != nil {
		return s
	}
	return p.Types.Scope()
}

// fieldNames names the wrapper's route fields after their breakers,
// avoiding the wrapper's methods, next and keywords.
func (b *builder) fieldNames(in *Interface) {
	taken := map[string]bool{}
	for _, m := range in.Methods {
		taken[m.Name] = true
	}
	// The wrapped value's field: next, unless a method has that name.
	in.NextField = "next"
	for i := 2; taken[in.NextField]; i++ {
		in.NextField = "next" + strconv.Itoa(i)
	}
	taken[in.NextField] = true
	for _, r := range in.Routes {
		base := ident(r.Name)
		cand := base
		if taken[cand] || token.IsKeyword(cand) {
			if r.Method != "" {
				cand = base + upperFirst(r.Method)
			}
			for i := 2; taken[cand] || token.IsKeyword(cand); i++ {
				cand = base + strconv.Itoa(i)
			}
		}
		taken[cand] = true
		r.Field = cand
	}
	fresh := func(want string) string {
		cand := want
		for i := 2; taken[cand] || token.IsKeyword(cand); i++ {
			cand = want + strconv.Itoa(i)
		}
		taken[cand] = true
		return cand
	}
	// The chain's own fields: the primary X, the fallbacks, and per route
	// the fallbacks' routes.
	if in.Chain {
		in.PrimaryField = fresh("primary")
		in.FallbacksField = fresh("fallbacks")
		for _, r := range in.Routes {
			r.FallbackField = fresh(r.Field + "Fallbacks")
		}
	}
	// The per-method try helpers, tryM, and stale caches, mStale.
	for _, m := range in.Methods {
		if m.Route == nil {
			continue
		}
		m.Try = fresh("try" + upperFirst(m.Name))
		if m.Route.Stale > 0 {
			m.StaleField = fresh(lowerFirst(m.Name) + "Stale")
		}
	}
}

// ident makes a breaker name an identifier: "fallback:sina" → fallbackSina.
func ident(name string) string {
	var sb strings.Builder
	up := false
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = sb.Len() > 0
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		sb.WriteRune(r)
	}
	s := sb.String()
	if s == "" || unicode.IsDigit(rune(s[0])) {
		s = "b" + s
	}
	return s
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }
func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func firstIsContext(sig *types.Signature) bool {
	if sig.Params().Len() == 0 {
		return false
	}
	return IsContext(sig.Params().At(0).Type())
}

// IsContext reports whether t is context.Context.
func IsContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func lastIsError(sig *types.Signature) bool {
	n := sig.Results().Len()
	if n == 0 {
		return false
	}
	t := sig.Results().At(n - 1).Type()
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// cgoFile reports the annotations of a cgo-processed file, which cannot be
// wrapped where they are.
func (b *builder) cgoFile(f *ast.File) {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, annotation.Prefix) {
				pos := b.fset.Position(c.Slash) // through cgo's //line directives
				if b.run.Sources[pos.Filename] {
					continue
				}
				b.errorf(pos, "interfaces in a file that imports \"C\" cannot be wrapped; move the interface to another file of the package")
				return
			}
		}
	}
}

// strayLines reports //breaker: lines in the doc comment of a declaration
// that is not a type: they annotate nothing.
func (b *builder) strayLines(doc *ast.CommentGroup, what string) {
	ls, _, _ := annotation.Scan(b.fset, doc, annotation.OnInterface)
	for _, l := range ls {
		b.errorf(l.Pos, "//breaker: on a %s declaration annotates nothing; annotate an interface", what)
	}
}
