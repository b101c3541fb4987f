package model

import (
	"fmt"
	"go/token"
	"go/types"
	"strconv"
	"strings"
	"time"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
)

// Family is a keyed breaker name of one wrapper (and of the chain's
// primary): a breakerimpl.Family of per-key routes, the breaker of key v
// named "<Name>/<v>". Every route of the interface that names it goes
// through it, so they share its line settings, those of Route.
type Family struct {
	Name  string
	Field string // the wrapper's field holding the *breakerimpl.Family
	Route *Route // the first route of the name: its settings make the family
}

// KeyKind is how a keyed method's argument becomes its key.
type KeyKind int

const (
	// KeyString is a string kind: Key(s), or Key(string(s)) for a named
	// string type.
	KeyString KeyKind = iota + 1
	// KeyInt is a signed integer kind: KeyInt(int64(n)).
	KeyInt
	// KeyUint is an unsigned integer kind: KeyUint(uint64(n)).
	KeyUint
	// KeyStringer is a fmt.Stringer: KeyString(s).
	KeyStringer
	// KeyHost is an *http.Request keyed by its host: Key(req.URL.Host).
	KeyHost
)

// Key says which argument of a keyed method picks its breaker, and how.
type Key struct {
	Param int // the parameter's index
	Kind  KeyKind
	// Convert reports whether the argument is converted first: its type is
	// a string or integer kind but not string, int64 or uint64 itself.
	Convert bool
}

var stringer = types.NewInterfaceType([]*types.Func{
	types.NewFunc(token.NoPos, nil, "String", types.NewSignatureType(nil, nil, nil, nil,
		types.NewTuple(types.NewVar(token.NoPos, nil, "", types.Typ[types.String])), false)),
}, nil).Complete()

// methodKey decides how mm, a guarded method whose route is keyed, picks
// its key: the parameter the key names, or for key=host without a
// parameter of that name, an *http.Request's URL.Host (a parameter called
// host wins: the key names what is written). Errors are at the key, once
// per key option: on an interface line, for the first method (in name
// order) it does not fit.
func (b *builder) methodKey(in *Interface, mm *Method) {
	r := mm.Route
	if r.KeyParam == "" {
		return
	}
	o := r.keyOpt
	sig := mm.Sig
	var names, keyable []string // keyable: the names a did-you-mean may offer
	idx := -1
	for i := range sig.Params().Len() {
		n := sig.Params().At(i).Name()
		if n == "" || n == "_" {
			continue
		}
		names = append(names, n)
		if t := sig.Params().At(i).Type(); types.Implements(t, stringer) {
			keyable = append(keyable, n)
		} else if info, ok := keyBasic(t); ok && info&(types.IsString|types.IsInteger) != 0 {
			keyable = append(keyable, n)
		}
		if n == r.KeyParam {
			idx = i
		}
	}
	if idx < 0 && r.KeyParam == "host" {
		for i := range sig.Params().Len() {
			if isNamedPtr(sig.Params().At(i).Type(), "net/http", "Request") {
				mm.Key = &Key{Param: i, Kind: KeyHost}
				return
			}
		}
	}
	if idx < 0 {
		msg := fmt.Sprintf("key: %s.%s has no parameter %s", in.Name, mm.Name, r.KeyParam)
		if r.KeyParam == "host" {
			msg += ", nor an *http.Request to key by its URL.Host"
		}
		// Only a parameter that can key: id offered f, a func.
		if c := annotation.Closest(r.KeyParam, keyable); c != "" {
			msg += fmt.Sprintf("; did you mean %s?", c)
		}
		if len(names) > 0 {
			msg += " (its parameters: " + strings.Join(names, ", ") + ")"
		} else {
			msg += " (it has no named parameters)"
		}
		if r.keyOnIface {
			msg += "; every method this line routes needs the parameter (give the others a line of their own with key=- and another name)"
		}
		b.keyErrorf(o.Pos, "%s", msg)
		return
	}
	t := sig.Params().At(idx).Type()
	if info, ok := keyBasic(t); ok {
		switch {
		case info&types.IsString != 0:
			mm.Key = &Key{Param: idx, Kind: KeyString, Convert: !types.Identical(t, types.Typ[types.String])}
			return
		case info&types.IsInteger != 0 && info&types.IsUnsigned != 0:
			mm.Key = &Key{Param: idx, Kind: KeyUint, Convert: !types.Identical(t, types.Typ[types.Uint64])}
			return
		case info&types.IsInteger != 0:
			mm.Key = &Key{Param: idx, Kind: KeyInt, Convert: !types.Identical(t, types.Typ[types.Int64])}
			return
		}
	}
	empty := false // a type parameter no type argument satisfies implements every interface
	if tp, ok := t.(*types.TypeParam); ok {
		if it, _ := tp.Constraint().Underlying().(*types.Interface); it != nil {
			terms, all := typeTerms(it)
			empty = !all && len(terms) == 0
		}
	}
	if !empty && types.Implements(t, stringer) {
		mm.Key = &Key{Param: idx, Kind: KeyStringer}
		return
	}
	why := ""
	if _, ok := t.(*types.TypeParam); ok {
		why = " (a type parameter keys when every type its constraint allows is a string type, or every one a signed, or every one an unsigned integer type)"
		if empty {
			why = " (its constraint allows no type at all: its elements intersect to nothing)"
		}
	}
	b.keyErrorf(o.Pos, "key: parameter %s of %s.%s is %s, which cannot key a breaker: a key is a string or integer kind, or a fmt.Stringer%s",
		r.KeyParam, in.Name, mm.Name, types.TypeString(t, pkgQualifier(in.Obj.Pkg())), why)
}

// keyBasic returns the basic kind of t's underlying type, or for a type
// parameter the kind that every type its constraint allows shares (a
// string kind, or a signed or an unsigned integer kind: string(k) or
// int64(k) converts any of them), ok false when there is none (no type
// terms, as any or fmt.Stringer, or terms of two kinds).
func keyBasic(t types.Type) (info types.BasicInfo, ok bool) {
	tp, isParam := t.(*types.TypeParam)
	if !isParam {
		bt, ok := t.Underlying().(*types.Basic)
		if !ok {
			return 0, false
		}
		return bt.Info(), true
	}
	it, _ := tp.Constraint().Underlying().(*types.Interface)
	if it == nil {
		return 0, false
	}
	terms, all := typeTerms(it)
	if all || len(terms) == 0 { // any type, or none (no type argument satisfies it)
		return 0, false
	}
	for i, tm := range terms {
		k := kindOf(tm.t)
		if k == kindOther {
			return 0, false
		}
		if i == 0 {
			info = k
		} else if k != info {
			return 0, false
		}
	}
	return info, true
}

// The kinds a key's type may be of (kindOf).
const (
	kindString   = types.IsString
	kindSigned   = types.IsInteger
	kindUnsigned = types.IsInteger | types.IsUnsigned
	kindOther    = 0
)

// kindOf returns the kind of t's underlying type: kindString,
// kindSigned, kindUnsigned, or kindOther.
func kindOf(t types.Type) types.BasicInfo {
	if b, ok := t.Underlying().(*types.Basic); ok {
		switch info := b.Info(); {
		case info&types.IsString != 0:
			return kindString
		case info&types.IsInteger != 0 && info&types.IsUnsigned != 0:
			return kindUnsigned
		case info&types.IsInteger != 0:
			return kindSigned
		}
	}
	return kindOther
}

// typeTerm is a term of a type set: the type t, or with tilde every type
// whose underlying type is t.
type typeTerm struct {
	tilde bool
	t     types.Type
}

// typeTerms returns the terms of the type set interface it allows, as Go
// computes it: its embedded elements intersect, each the union of its
// terms (a term may be an interface itself); all is true when it has no
// type terms (methods alone: every type).
func typeTerms(it *types.Interface) (terms []typeTerm, all bool) {
	all = true
	for e := range it.EmbeddedTypes() {
		et, eAll := elementTerms(e)
		switch {
		case eAll:
		case all:
			terms, all = et, false
		default:
			terms = intersectTerms(terms, et)
		}
	}
	return terms, all
}

// elementTerms returns the terms of an interface's embedded element t.
func elementTerms(t types.Type) (terms []typeTerm, all bool) {
	if u, ok := t.(*types.Union); ok {
		for tm := range u.Terms() {
			if it, ok := tm.Type().Underlying().(*types.Interface); ok {
				sub, subAll := typeTerms(it)
				if subAll {
					return nil, true
				}
				terms = append(terms, sub...)
				continue
			}
			terms = append(terms, typeTerm{tm.Tilde(), tm.Type()})
		}
		return terms, false
	}
	if it, ok := t.Underlying().(*types.Interface); ok {
		return typeTerms(it)
	}
	return []typeTerm{{false, t}}, false
}

// intersectTerms returns the terms both a and b allow.
func intersectTerms(a, b []typeTerm) []typeTerm {
	var out []typeTerm
	for _, x := range a {
		for _, y := range b {
			switch {
			case x.tilde && y.tilde:
				if types.Identical(x.t, y.t) {
					out = append(out, x)
				}
			case x.tilde:
				if types.Identical(x.t, y.t.Underlying()) {
					out = append(out, y)
				}
			case y.tilde:
				if types.Identical(y.t, x.t.Underlying()) {
					out = append(out, x)
				}
			case types.Identical(x.t, y.t):
				out = append(out, x)
			}
		}
	}
	return out
}

// keyErrorf reports a problem of a key option once: an interface line's
// key is checked against each method it routes.
func (b *builder) keyErrorf(pos token.Position, format string, args ...any) {
	if b.keyErrs[pos] {
		return
	}
	b.keyErrs[pos] = true
	b.errorf(pos, format, args...)
}

// families gathers the keyed routes of in by name: one family per keyed
// name, whose routes must agree on the line settings the family's routes
// are made with.
func (b *builder) families(in *Interface) {
	byName := map[string]*Family{}
	for _, r := range in.Routes {
		if r.KeyParam == "" {
			continue
		}
		f := byName[r.Name]
		if f == nil {
			f = &Family{Name: r.Name, Route: r}
			byName[r.Name] = f
			in.Families = append(in.Families, f)
		} else if k, v, w := lineDiff(f.Route, r); k != "" {
			b.errorf(r.Pos, "breaker %q is keyed: the methods of %s that name it go through one family of breakers, made with one line's settings, but this line gives %s and the line at %s %s; give the method a name of its own, or the same %s",
				r.Name, in.Name, w, f.Route.Pos, v, k)
		}
		r.Family = f
	}
}

// lineDiff returns the first line key (as the family's routes are made
// with it) whose value differs between a and b, and the two values; "" if
// none does.
func lineDiff(a, b *Route) (key, va, vb string) {
	dur := func(d time.Duration) string {
		if d == 0 {
			return "none"
		}
		return d.String()
	}
	num := func(n int) string {
		if n == 0 {
			return "none"
		}
		return strconv.Itoa(n)
	}
	refs := func(rs []Ref) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Path+"."+r.Name)
		}
		if len(out) == 0 {
			return "none"
		}
		return strings.Join(out, ",")
	}
	texts := func(rs []Ref) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Text)
		}
		if len(out) == 0 {
			return "none"
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct{ key, a, b, ta, tb string }{
		{"timeout", dur(a.Timeout), dur(b.Timeout), "", ""},
		{"maxwait", dur(a.MaxWait), dur(b.MaxWait), "", ""},
		{"exclude", refs(a.Exclude), refs(b.Exclude), texts(a.Exclude), texts(b.Exclude)},
		{"attempts", num(a.Attempts), num(b.Attempts), "", ""},
		{"backoff", a.Backoff.String(), b.Backoff.String(), "", ""},
		{"budget", num(a.Budget), num(b.Budget), "", ""},
		{"hedge", dur(a.Hedge), dur(b.Hedge), "", ""},
		{"hedges", num(a.Hedges), num(b.Hedges), "", ""},
	} {
		if c.a != c.b {
			if c.ta != "" {
				return c.key, c.key + "=" + c.ta, c.key + "=" + c.tb
			}
			return c.key, c.key + "=" + c.a, c.key + "=" + c.b
		}
	}
	return "", "", ""
}

// keyChecks checks, once every route of the run is known, the keys that
// need a keyed name (keys, maxopen need key on a route of their name in
// the package), and that no name is keyed on one route and not on
// another: a name is either a family of per-key breakers or one breaker.
func (b *builder) keyChecks() {
	keyed := map[nameKey]bool{}
	for _, r := range b.routes {
		if r.KeyParam != "" {
			keyed[nameKey{r.pkg, r.Name}] = true
		}
	}
	for k, ni := range b.names { // the errors are sorted later
		if k.pkg == "" || keyed[k] || ni.invalid["key"] {
			continue
		}
		for _, key := range []string{"keys", "maxopen"} {
			if o, ok := ni.given[key]; ok {
				b.errorf(o.Pos, "%s: breaker %q has no key=PARAM on any of its routes, so there are no per-key breakers to bound; give key=PARAM too", key, k.name)
			}
		}
	}
	// The routes that guard a method, in the order they were read. A key
	// already reported as not fitting its method is left out: the error
	// at it says what to fix, and a second one at every unkeyed line of
	// the name would ask for more keys that cannot be right either.
	firstKeyed := map[string]*Route{}
	var unkeyed []*Route
	for _, md := range b.ifaces {
		for _, r := range md.in.Routes {
			if r.KeyParam == "" {
				unkeyed = append(unkeyed, r)
			} else if firstKeyed[r.Name] == nil && !b.keyErrs[r.keyOpt.Pos] {
				firstKeyed[r.Name] = r
			}
		}
	}
	for _, r := range unkeyed {
		if k := firstKeyed[r.Name]; k != nil {
			b.errorf(r.Pos, "breaker %q is keyed by key=%s at %s, but the methods this line routes are not: a name is either one breaker or a family of per-key breakers; give this line key=PARAM too, or another name",
				r.Name, k.KeyParam, k.keyOpt.Pos)
		}
	}
}
