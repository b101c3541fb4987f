package model

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
)

// nameInfo gathers the name-level settings given for one breaker name.
type nameInfo struct {
	given map[string]annotation.Option // key → first option giving it
	// every are all the options giving each key, in the order read.
	every map[string][]annotation.Option
	// invalid are the keys given for the name with a value that did not
	// parse (already errors), so that no check takes the name for one
	// without them.
	invalid map[string]bool
}

// settings are the name's settings as given in one package.
func (ni *nameInfo) settings() Settings {
	var s Settings
	for k, o := range ni.given {
		switch k {
		case "threshold":
			s.Threshold = o.Value.Count
		case "reset":
			s.Reset, s.ResetMax = o.Value.Duration, o.Value.Backoff.Max
		case "jitter":
			s.Jitter = o.Value.Number
		case "halfopen":
			s.HalfOpen = o.Value.Count
		case "successes":
			s.Successes = o.Value.Count
		case "ratelimit":
			s.Rate = o.Value.Rate
		case "window":
			s.WindowCalls, s.WindowPeriod = o.Value.Count, o.Value.Duration
		case "failrate":
			s.FailureRate = o.Value.Number
		case "minimum":
			s.MinimumCalls = o.Value.Count
		case "slow":
			s.SlowCall = o.Value.Duration
		case "slowrate":
			s.SlowRate = o.Value.Number
		case "inflight":
			s.InFlight = o.Value.Duration
		case "concurrency":
			s.Concurrency = o.Value.Count
		case "throttle":
			s.Throttle = o.Value.Number
		case "keys":
			s.Keys = o.Value.Count
		case "maxopen":
			s.MaxOpen = o.Value.Count
		}
	}
	return s
}

// newRoute makes the route of one line. A line without name takes the name
// of inherit (a method line) or defaultName, and the line keys of inherit
// that it does not give itself; a method line that names another breaker
// takes them too, but maxwait, which belonged to the other name's limiter. Its name-level settings are recorded for
// the name and filled in by [builder.resolve] once the run is read.
func (b *builder) newRoute(l *annotation.Line, defaultName string, inherit *Route, rs resolver) *Route {
	r := &Route{Name: defaultName, Pos: l.Pos}
	if inherit != nil {
		r.inheritLineKeys(inherit)
	}
	if _, ok := l.Get("name"); !ok && inherit == nil && !slices.Contains(l.Invalid, "name") && !annotation.ValidName(defaultName) {
		// The interface's name lower-cased is the default (SPEC §2), but
		// only a name of the grammar can be one: letters outside ASCII
		// need a name= of their own.
		b.errorf(l.Pos, "name: the default name %q, the interface's name lower-cased, is not a valid name (lower-case letters, digits and _ . : -); give this line a name=", defaultName)
	}
	if o, ok := l.Get("name"); ok {
		if o.Value.Name != r.Name {
			// An inherited maxwait bounded the waits for the other
			// name's tokens; this name's limiter, if any, is not bound
			// by it.
			r.MaxWait, r.maxwaitOpt = 0, nil
		}
		r.Name = o.Value.Name
	}
	if rs.pkg != nil {
		r.pkg = rs.pkg.Path()
	}
	b.nameKeys(r.pkg, r.Name, l)
	for _, o := range l.Options {
		b.lineKey(r, l, o, rs)
	}
	if o, ok := l.Get("stalesize"); ok && r.Stale == 0 {
		b.errorf(o.Pos, "stalesize: there is no stale cache to size; give stale=D too")
	}
	if r.Stale == 0 {
		r.StaleSize = 0
	}
	if o, ok := l.Get("hedges"); ok && r.Hedge == 0 && !slices.Contains(l.Invalid, "hedge") {
		b.errorf(o.Pos, "hedges: there is no hedge to bound; give hedge=D too")
	}
	b.routes = append(b.routes, r)
	return r
}

// inheritLineKeys copies the name and the line keys of the route a method
// line refines.
func (r *Route) inheritLineKeys(from *Route) {
	r.Name = from.Name
	r.Timeout, r.MaxWait, r.maxwaitOpt, r.Exclude = from.Timeout, from.MaxWait, from.maxwaitOpt, from.Exclude
	r.Attempts, r.Backoff, r.backoffOpt, r.Budget = from.Attempts, from.Backoff, from.backoffOpt, from.Budget
	r.Valid, r.ValidNamed, r.validFunc, r.validOpt = from.Valid, from.ValidNamed, from.validFunc, from.validOpt
	r.Failure, r.failFunc, r.failOpt = from.Failure, from.failFunc, from.failOpt
	r.Stale, r.StaleSize, r.staleOpt = from.Stale, from.StaleSize, from.staleOpt
	r.Hedge, r.Hedges = from.Hedge, from.Hedges
	r.KeyParam, r.keyOpt, r.keyOnIface = from.KeyParam, from.keyOpt, from.keyOnIface
}

// nameKeys records the name-level keys l, a line of package pkg, gives for
// name; a value that differs from one given before for the name anywhere
// in the run is an error citing both. A name's settings are gathered per
// package: what a package's wrappers get must not depend on which other
// packages the run loaded (go generate runs one package at a time), so
// settings given in another package are checked against, never inherited.
func (b *builder) nameKeys(pkg, name string, l *annotation.Line) {
	ni := b.nameInfo(pkg, name)
	all := b.nameInfo("", name) // the whole run's, for the conflicts
	for _, k := range l.Invalid {
		ni.invalid[k] = true
	}
	for _, o := range l.Options {
		if annotation.KeyScope(o.Key) != annotation.NameScope {
			continue
		}
		all.every[o.Key] = append(all.every[o.Key], o)
		if prev, ok := all.given[o.Key]; ok {
			if !prev.Value.Equal(o.Value) {
				b.errorf(o.Pos, "breaker %q: %s=%s conflicts with %s=%s given at %s", name, o.Key, o.Raw, prev.Key, prev.Raw, prev.Pos)
			}
		} else {
			all.given[o.Key] = o
		}
		if _, ok := ni.given[o.Key]; !ok {
			ni.given[o.Key] = o
		}
	}
}

// nameInfo returns the settings gathered for name in package pkg ("" for
// the whole run's), creating them.
func (b *builder) nameInfo(pkg, name string) *nameInfo {
	k := nameKey{pkg, name}
	ni := b.names[k]
	if ni == nil {
		ni = &nameInfo{given: map[string]annotation.Option{}, every: map[string][]annotation.Option{}, invalid: map[string]bool{}}
		b.names[k] = ni
	}
	return ni
}

// nameKey scopes a breaker name to a package ("" for the whole run).
type nameKey struct{ pkg, name string }

// lineKey applies one line key of l to r; other keys are left alone.
func (b *builder) lineKey(r *Route, l *annotation.Line, o annotation.Option, rs resolver) {
	switch o.Key {
	case "timeout":
		r.Timeout = o.Value.Duration
	case "maxwait":
		r.MaxWait, r.maxwaitOpt = o.Value.Duration, &o
	case "exclude":
		r.Exclude = b.resolveExclude(o, rs)
	case "attempts":
		r.Attempts = o.Value.Count
	case "backoff":
		r.Backoff, r.backoffOpt = o.Value.Backoff, &o
	case "budget":
		r.Budget = o.Value.Count
	case "valid":
		r.Valid, r.ValidNamed, r.validFunc, r.validOpt = nil, false, nil, nil
		if o.Value.Name == "-" {
			if l.Where == annotation.OnInterface {
				b.errorf(o.Pos, "valid: - clears a valid func a method inherits; on an interface line, leave valid out")
			}
			return
		}
		r.validOpt = &o
		if f := b.resolveValid(o, rs); f != nil {
			r.validFunc = f
			r.Valid = &Ref{Path: f.Pkg().Path(), Name: f.Name(), Text: o.Raw}
			// A func returning a named bool (checkResults takes any whose
			// underlying type is bool) is converted where it is called.
			res := f.Type().(*types.Signature).Results()
			r.ValidNamed = res.Len() == 1 && !types.Identical(res.At(0).Type(), types.Typ[types.Bool])
		}
	case "failure":
		r.Failure, r.failFunc, r.failOpt = nil, nil, nil
		if o.Value.Name == "-" {
			if l.Where == annotation.OnInterface {
				b.errorf(o.Pos, "failure: - clears a failure func a method inherits; on an interface line, leave failure out")
			}
			return
		}
		r.failOpt = &o
		if f := b.resolveFunc("failure", o, rs); f != nil {
			r.failFunc = f
			r.Failure = &Ref{Path: f.Pkg().Path(), Name: f.Name(), Text: o.Raw}
		}
	case "stale":
		r.Stale, r.staleOpt = o.Value.Duration, &o
		if r.Stale == 0 {
			r.staleOpt = nil
			if l.Where == annotation.OnInterface {
				b.errorf(o.Pos, "stale: 0 clears a stale cache a method inherits; on an interface line, leave stale out")
			}
		}
	case "stalesize":
		r.StaleSize = o.Value.Count
	case "hedge":
		r.Hedge = o.Value.Duration
	case "hedges":
		r.Hedges = o.Value.Count
	case "key":
		r.KeyParam, r.keyOpt, r.keyOnIface = o.Value.Name, &o, l.Where == annotation.OnInterface
		if o.Value.Name == "-" {
			r.KeyParam, r.keyOpt = "", nil
			if l.Where == annotation.OnInterface {
				b.errorf(o.Pos, "key: - clears a key a method inherits; on an interface line, leave key out")
			}
		}
	}
}

// resolve fills in every route's name-level settings from its package,
// and checks the keys that need another key of their name.
func (b *builder) resolve() {
	for _, r := range b.routes {
		ni := b.nameInfo(r.pkg, r.Name)
		r.Settings = ni.settings()
		s := r.Settings
		if r.maxwaitOpt != nil && s.Rate.Per == 0 && s.Concurrency == 0 && !ni.invalid["ratelimit"] && !ni.invalid["concurrency"] {
			b.errorf(r.maxwaitOpt.Pos, "maxwait: breaker %q has no ratelimit or concurrency, so there is no token or slot to wait for", r.Name)
		}
	}
	b.namesAcrossPackages()
	for k, ni := range b.names { // the errors are sorted later
		name := k.name
		if k.pkg == "" {
			continue // the run's: checked per package
		}
		errs, warnings := annotation.CheckWindowKeys(name, ni.given, ni.invalid)
		b.run.Errors = append(b.run.Errors, errs...)
		b.run.Warnings = append(b.run.Warnings, warnings...)
	}
}

// namesAcrossPackages warns of a name whose routes in one package give
// fewer of its settings than another package's do: each package's
// wrappers make the breaker (and its limiter) with the settings given in
// their own package, so the first wrapper made at run time would decide
// them for all, and routes without a ratelimit would not wait for the
// name's limiter at all. A warning, not an error: packages of one run may
// be programs of their own, which share no registry. A value given in both
// packages and differing is an error (nameKeys).
func (b *builder) namesAcrossPackages() {
	first := map[nameKey]*Route{} // each package's first route of each name
	for _, r := range b.routes {
		if k := (nameKey{r.pkg, r.Name}); first[k] == nil {
			first[k] = r
		}
	}
	for k, ni := range b.names { // the errors are sorted later
		r := first[k]
		if k.pkg == "" || r == nil {
			continue
		}
		all := b.names[nameKey{"", k.name}]
		_, windowed := all.given["window"]
		var missing []annotation.Option
		for key, o := range all.given {
			if _, ok := ni.given[key]; ok || ni.invalid[key] {
				continue
			}
			// A default given is the same setting as none, but a threshold
			// beside a window, which applies only when given.
			if d, ok := annotation.DefaultOf(key); ok && d.Equal(o.Value) && !(key == "threshold" && windowed) {
				continue
			}
			missing = append(missing, o)
		}
		if len(missing) == 0 {
			continue
		}
		slices.SortFunc(missing, func(x, y annotation.Option) int { return cmp.Compare(x.Key, y.Key) })
		var given []string
		limit := ""
		for _, o := range missing {
			given = append(given, fmt.Sprintf("%s=%s (at %s)", o.Key, o.Raw, o.Pos))
			if o.Key == "ratelimit" {
				limit = ", and this package's calls would not wait for its limiter"
			}
		}
		b.warnf(r.Pos, "breaker %q: another package of the run gives it %s, and this package does not: each package's wrappers make the breaker with the settings given in their own package (go generate runs one package at a time), so whichever wrapper is made first at run time would set them for both%s; give the same settings here too, or use another name", k.name, strings.Join(given, ", "), limit)
	}
}

// resolver resolves the identifiers of annotations as the interface's
// file sees them.
type resolver struct {
	scope *types.Scope // the file's
	pkg   *types.Package
}

func fileScope(p *packages.Package, f *ast.File) *types.Scope {
	if s := p.TypesInfo.Scopes[f]; s != nil {
		return s
	}
	return p.Types.Scope()
}

// pkgWithPath names p, and its path when that is not its name.
func pkgWithPath(p *types.Package) string {
	if p.Path() == p.Name() {
		return p.Name()
	}
	return p.Name() + " (" + p.Path() + ")"
}

// wellKnown are the import paths of the packages whose names annotations
// most often spell, for the advice to import one.
var wellKnown = map[string]string{
	"httpguard": "github.com/breakergen/breakergen/runtime/httpguard",
	"runtime":   "github.com/breakergen/breakergen/runtime",
	"redis":     "github.com/redis/go-redis/v9",
	"sql":       "database/sql",
	"http":      "net/http",
	"url":       "net/url",
	"io":        "io",
	"fs":        "io/fs",
	"os":        "os",
	"context":   "context",
	"errors":    "errors",
	"status":    "google.golang.org/grpc/status",
	"codes":     "google.golang.org/grpc/codes",
}

// notImported is object's problem with q.sel when the file has no
// package named q: the name the file imports q's package as, when it does
// (database/sql as dbsql: write dbsql.ErrNoRows), else the import to add,
// with its path when the package or a well-known one says it.
func (rs resolver) notImported(id, q, sel string) string {
	if obj := lookup(rs.scope, sel); obj != nil && obj.Pkg() != nil && obj.Pkg().Name() == q && obj.Pkg() != rs.pkg {
		// A dot import puts the package's names in the file's scope.
		return id + ": this file imports package " + pkgWithPath(obj.Pkg()) + " with a dot: write " + sel
	}
	for _, name := range rs.scope.Names() {
		if pn, ok := rs.scope.Lookup(name).(*types.PkgName); ok && pn.Imported().Name() == q && pn.Name() != "_" && pn.Name() != "." {
			return id + ": this file imports package " + pkgWithPath(pn.Imported()) + " as " + pn.Name() + ": write " + pn.Name() + "." + sel
		}
	}
	path := ""
	if rs.pkg != nil {
		for _, imp := range rs.pkg.Imports() {
			if imp.Name() == q {
				path = imp.Path()
				break
			}
		}
	}
	if path == "" {
		path = wellKnown[q]
	}
	what := "import " + q
	if path != "" {
		what = "import " + strconv.Quote(path)
	}
	return id + ": " + q + " is not an imported package in this file: names resolve as the interface's file sees them, so " + what + " there (if nothing else in the file uses it, add var _ = " + id + ")"
}

// object resolves id, a package-level name of the package (what: "value",
// "func"), one of a package the file dot-imports, or pkg.Name of a package
// the file imports. It returns the object, or a problem to report after
// "key: ".
func (rs resolver) object(id, what string) (types.Object, string) {
	if q, sel, ok := strings.Cut(id, "."); ok {
		pn, _ := lookup(rs.scope, q).(*types.PkgName)
		if pn == nil {
			return nil, rs.notImported(id, q, sel)
		}
		obj := pn.Imported().Scope().Lookup(sel)
		if obj == nil || !obj.Exported() {
			return nil, id + ": package " + pn.Imported().Path() + " has no exported " + sel + nearName(pn.Imported().Scope(), sel, what, true, q+".")
		}
		return obj, ""
	}
	obj := lookup(rs.scope, id)
	if obj == nil {
		return nil, id + ": undefined" + nearName(rs.pkg.Scope(), id, what, false, "")
	}
	if p := obj.Pkg(); p != nil && p != rs.pkg && obj.Parent() == p.Scope() {
		return obj, "" // dot-imported: the file sees it bare
	}
	if obj.Parent() != rs.pkg.Scope() {
		return nil, id + ": not a package-level " + what + " of " + rs.pkg.Name()
	}
	return obj, ""
}

// nearName returns "; did you mean X?" for the name of scope closest to
// name that could be what ("value": a variable or constant; "func"), only
// exported ones when exported, written with prefix; or "".
func nearName(scope *types.Scope, name, what string, exported bool, prefix string) string {
	var cands []string
	for _, n := range scope.Names() {
		obj := scope.Lookup(n)
		if exported && !obj.Exported() {
			continue
		}
		switch obj.(type) {
		case *types.Var, *types.Const:
			if what != "value" {
				continue
			}
		case *types.Func:
			if what != "func" {
				continue
			}
		default:
			continue
		}
		cands = append(cands, n)
	}
	if c := annotation.Closest(name, cands); c != "" {
		return "; did you mean " + prefix + c + "?"
	}
	return ""
}

// resolveExclude resolves exclude's identifiers: each must be a
// package-level value whose type implements error. The errors are at the
// item.
func (b *builder) resolveExclude(o annotation.Option, rs resolver) []Ref {
	var refs []Ref
	errType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	for i, id := range o.Value.List {
		pos := o.ItemPos(i)
		obj, problem := rs.object(id, "value")
		switch obj.(type) {
		case nil:
			b.errorf(pos, "exclude: %s", problem)
			continue
		case *types.Var, *types.Const:
		default:
			b.errorf(pos, "exclude: %s is not a variable or constant (it is a %s)", id, kind(obj))
			continue
		}
		if !types.Implements(obj.Type(), errType) {
			b.errorf(pos, "exclude: %s is not an error: its type %s does not implement error", id, types.TypeString(obj.Type(), types.RelativeTo(rs.pkg)))
			continue
		}
		refs = append(refs, Ref{Path: obj.Pkg().Path(), Name: obj.Name(), Text: id})
	}
	return refs
}

// resolveValid resolves valid's identifier: a package-level func, not
// generic. Whether its signature fits is checked per method
// ([builder.checkResults]).
func (b *builder) resolveValid(o annotation.Option, rs resolver) *types.Func {
	return b.resolveFunc("valid", o, rs)
}

// resolveFunc resolves the identifier of key (valid, failure): a
// package-level func, not generic.
func (b *builder) resolveFunc(key string, o annotation.Option, rs resolver) *types.Func {
	id := o.Value.Name
	obj, problem := rs.object(id, "func")
	if obj == nil {
		b.errorf(o.Pos, "%s: %s", key, problem)
		return nil
	}
	f, ok := obj.(*types.Func)
	if !ok {
		b.errorf(o.Pos, "%s: %s is not a func (it is a %s)", key, id, kind(obj))
		return nil
	}
	if f.Type().(*types.Signature).TypeParams().Len() > 0 {
		b.errorf(o.Pos, "%s: %s is generic; name a func of the results' own types", key, id)
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
	n := res.Len() - 1
	if m.Carrier != nil {
		n = res.Len() // the carrier is a result too
	}
	for i := range n {
		want = append(want, res.At(i).Type())
	}
	qual := pkgQualifier(in.Obj.Pkg())
	// A type parameter of the interface is in scope in the whole wrapper:
	// a local func of its name could not be called there.
	for _, ref := range []struct {
		key string
		r   *Ref
		o   *annotation.Option
	}{{"valid", r.Valid, r.validOpt}, {"failure", r.Failure, r.failOpt}} {
		if ref.r == nil || ref.o == nil || ref.r.Path != in.Obj.Pkg().Path() || in.TypeParams == nil {
			continue
		}
		for tp := range in.TypeParams.TypeParams() {
			if tp.Obj().Name() == ref.r.Name {
				b.errorf(ref.o.Pos, "%s: %s is also the name of %s's type parameter, which hides the func in the wrapper; rename one of them", ref.key, ref.r.Name, in.Name)
			}
		}
	}
	row := m.Carrier != nil && m.Carrier.Refuse == CarrySQLRow
	if r.failFunc != nil && row && r.failOpt != nil {
		b.errorf(r.failOpt.Pos, "failure: %s.%s returns a *sql.Row, which only its first Scan reads: a failure func could not judge it without taking it from the caller, and its Err() is judged already", in.Name, m.Name)
	} else if r.failFunc != nil {
		sig := r.failFunc.Type().(*types.Signature)
		errType := types.Universe.Lookup("error").Type()
		fits := !sig.Variadic() && sig.Params().Len() == len(want) && sig.Results().Len() == 1 &&
			types.Identical(sig.Results().At(0).Type(), errType) && len(want) > 0
		for i := 0; fits && i < len(want); i++ {
			fits = types.AssignableTo(want[i], sig.Params().At(i).Type())
		}
		if !fits {
			var ts []string
			for _, t := range want {
				ts = append(ts, types.TypeString(t, qual))
			}
			if len(want) == 0 {
				b.errorf(r.failOpt.Pos, "failure: %s.%s returns only an error: there is no answer to judge%s", in.Name, m.Name, fromLine(in, r, r.failOpt, m, "failure=-"))
			} else {
				b.errorf(r.failOpt.Pos, "failure: %s is %s; %s.%s needs func(%s) error%s", r.Failure.Text,
					types.TypeString(sig, qual), in.Name, m.Name, strings.Join(ts, ", "), fromLine(in, r, r.failOpt, m, "failure=-"))
			}
		}
	}
	if r.validFunc != nil && row && r.validOpt != nil {
		b.errorf(r.validOpt.Pos, "valid: %s.%s returns a *sql.Row, which only its first Scan reads: a valid func could not judge it without taking it from the caller; give the method a line with valid=-", in.Name, m.Name)
	} else if r.validFunc != nil {
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
			if len(want) == 0 {
				b.errorf(r.validOpt.Pos, "valid: %s.%s returns only an error: there is no answer to judge%s", in.Name, m.Name, fromLine(in, r, r.validOpt, m, "valid=-"))
			} else {
				b.errorf(r.validOpt.Pos, "valid: %s is %s; %s.%s needs func(%s) bool%s", r.Valid.Text,
					types.TypeString(sig, qual), in.Name, m.Name, strings.Join(ts, ", "), fromLine(in, r, r.validOpt, m, "valid=-"))
			}
		}
	}
	if r.Stale > 0 && r.staleOpt != nil {
		if len(want) == 0 {
			b.errorf(r.staleOpt.Pos, "stale: %s.%s returns only an error: there is no result to keep%s", in.Name, m.Name, fromLine(in, r, r.staleOpt, m, "stale=0"))
			return
		}
		// A cached value is served as returned, to every later caller: a
		// result read once cannot be.
		once := ""
		switch {
		case m.Carrier != nil && m.Carrier.Refuse == CarrySQLRow:
			once = "a *sql.Row, which its first Scan reads and closes"
		case m.Response > 0:
			once = "a *http.Response, whose body its first reader consumes"
		case len(m.Handles) > 0:
			once = handleOnce[m.Handles[0].Type]
		default:
			if t := readerResult(m.Sig, len(want)); t != nil {
				once = types.TypeString(t, qual) + ", an io.Reader, which its first reader consumes"
				if once == "io.Reader, an io.Reader, which its first reader consumes" {
					once = "io.Reader, which its first reader consumes"
				}
				break
			}
			for _, t := range want {
				if what := readLater(t, map[types.Type]bool{}); what != "" {
					// A stream's messages, a channel's values, an
					// iterator's run: each is taken once, by its first
					// reader, and read through the first call's ctx.
					once = types.TypeString(t, qual) + " (" + what + "), which its first reader uses up"
					break
				}
			}
		}
		if once != "" {
			b.errorf(r.staleOpt.Pos, "stale: %s.%s returns %s, so a kept answer could not be served again; give the method a line with stale=0, or keep the decoded answer in a method that returns it", in.Name, m.Name, once)
			return
		}
		for i := range m.Sig.Params().Len() {
			v := m.Sig.Params().At(i)
			if i == 0 && m.CtxFirst() {
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
		for i := range m.Sig.Params().Len() {
			v := m.Sig.Params().At(i)
			_, ptr := v.Type().Underlying().(*types.Pointer)
			body := slices.Contains(m.Readers, i)
			if !ptr && !body || i == 0 && m.CtxFirst() || m.Request == i+1 {
				continue
			}
			// A request built for each call (a gRPC or SDK request is a
			// pointer) is a new key each time: the cache never answers.
			// So is a body: an io.Reader is compared as the reader it
			// holds, never by what it would read.
			what := "argument " + strconv.Itoa(i+1)
			if v.Name() != "" && v.Name() != "_" {
				what = "argument " + v.Name()
			}
			if body {
				b.warnf(r.staleOpt.Pos, "stale: %s.%s: %s of type %s keys the cache by the reader it is given, never by what it reads, so a call with a new reader never finds the kept answer; key by values (a method taking them), or give the method a line with stale=0", in.Name, m.Name, what, types.TypeString(v.Type(), qual))
				return
			}
			b.warnf(r.staleOpt.Pos, "stale: %s.%s: %s of type %s keys the cache by its address, so a new %s with the same fields never finds the kept answer; key by values (a method taking them), or give the method a line with stale=0", in.Name, m.Name, what, types.TypeString(v.Type(), qual), types.TypeString(v.Type(), qual))
			return
		}
	}
}

// handleOnce says why each of database/sql's handles (sqlHandleTypes)
// cannot be served twice.
var handleOnce = map[string]string{
	"Rows": "*sql.Rows, which their first reader reads and closes",
	"Tx":   "a *sql.Tx, which its first caller commits or rolls back",
	"Conn": "a *sql.Conn, which its first caller closes",
	"Stmt": "a *sql.Stmt, which its first caller closes",
}

// readerResult returns the type of the first of the first n results of sig
// that is an io.Reader (it has Read([]byte) (int, error)), or nil.
func readerResult(sig *types.Signature, n int) types.Type {
	for i := range min(n, sig.Results().Len()) {
		if t := sig.Results().At(i).Type(); isReader(t) {
			return t
		}
	}
	return nil
}

// isReader reports whether t has a method Read([]byte) (int, error).
func isReader(t types.Type) bool { return types.Implements(t, readerType) }

// hasClose reports whether t has a method Close() error.
func hasClose(t types.Type) bool { return types.Implements(t, closerType) }

// readerType and closerType are io.Reader and io.Closer, spelled in
// go/types, for types of packages that need not import io.
var (
	errorType  = types.Universe.Lookup("error").Type()
	readerType = ioInterface("Read", types.NewTuple(types.NewParam(0, nil, "p", types.NewSlice(types.Typ[types.Byte]))),
		types.NewTuple(types.NewParam(0, nil, "n", types.Typ[types.Int]), types.NewParam(0, nil, "err", errorType)))
	closerType = ioInterface("Close", nil, types.NewTuple(types.NewParam(0, nil, "", errorType)))
)

// ioInterface returns the interface of one method, name(params) results.
func ioInterface(name string, params, results *types.Tuple) *types.Interface {
	sig := types.NewSignatureType(nil, nil, nil, params, results, false)
	return types.NewInterfaceType([]*types.Func{types.NewFunc(0, nil, name, sig)}, nil).Complete()
}

// fromLine returns, for an error about m at option o of its route r, how
// to exempt m when o is on a line of in that routes other methods too:
// "" when o is on m's own line, or in has no other method.
func fromLine(in *Interface, r *Route, o *annotation.Option, m *Method, clear string) string {
	if r.Method != "" && o.Pos.Line == r.Pos.Line || len(in.Methods) < 2 {
		return ""
	}
	if r.Method != "" {
		return fmt.Sprintf(" (%s's line inherits the key from the interface's line: give it %s)", m.Name, clear)
	}
	return fmt.Sprintf(" (the key is on the interface's line, which routes %s too: give %s a line of its own with %s, or leave it out of the line's methods=)", m.Name, m.Name, clear)
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
