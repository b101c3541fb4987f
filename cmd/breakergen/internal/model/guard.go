package model

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
)

// modelled is an interface whose methods were routed, kept for the
// warnings about what it guards, which need every route of the run.
type modelled struct {
	in  *Interface
	ils ifaceLines
	pkg string
	own map[string]bool // the methods written in the interface literal
}

// ownMethods names the methods written in the interface literal of ts
// (the others come from embedded interfaces).
func ownMethods(ts *ast.TypeSpec) map[string]bool {
	own := map[string]bool{}
	if it, ok := ts.Type.(*ast.InterfaceType); ok && it.Methods != nil {
		for _, f := range it.Methods.List {
			for _, n := range f.Names {
				own[n.Name] = true
			}
		}
	}
	return own
}

// guardWarnings warns, per modelled interface, about what its annotation
// leaves unguarded, from the model's decisions (a method is guarded when
// it has a route; a skipped one was asked for): an interface that guards
// no method at all (and the keys that therefore do nothing); else its
// methods delegated unguarded (count and first names), each interface
// line that guards none of the methods it routes, and each whose breaker
// name no method takes (every method it guards names its own), so that
// the name's settings do nothing. A run with errors writes
// nothing and gets none of these: its routes are not the fixed ones.
func (b *builder) guardWarnings() {
	if len(b.run.Errors) > 0 {
		return
	}
	used := map[nameKey]bool{} // names that guard a method, per package
	for _, md := range b.ifaces {
		for _, r := range md.in.Routes {
			used[nameKey{r.pkg, r.Name}] = true
		}
	}
	for _, md := range b.ifaces {
		in := md.in
		var guarded int
		var unguarded, skipped []*Method
		for _, m := range in.Methods {
			switch {
			case m.Route != nil:
				guarded++
			case m.Why == "skip":
				skipped = append(skipped, m)
			default:
				unguarded = append(unguarded, m)
			}
		}
		if guarded == 0 {
			var ls []*ifaceLine
			ls = append(ls, md.ils.globbed...)
			if md.ils.dflt != nil {
				ls = append(ls, md.ils.dflt)
			}
			idle := idleKeys(md.pkg, used, ls...)
			if len(in.Methods) == 0 {
				b.warnf(in.Pos, "%s: the interface has no methods: the wrapper guards nothing%s; remove the annotation", in.Name, doNothing(idle))
				continue
			}
			b.warnf(in.Pos, "%s: the wrapper guards none of its %s (%s)%s; %s", in.Name, count(len(in.Methods), "method"),
				reasons(append(unguarded, skipped...)), doNothing(idle), nothingFix(unguarded))
			continue
		}
		b.guardedClose(md)
		b.iteratorsWithError(in)
		if len(unguarded) > 0 {
			b.warnf(in.Pos, "%s: %d of its %s %s delegated unguarded (%s), so no breaker sees %s failures; %s", in.Name,
				len(unguarded), count(len(in.Methods), "method"), pick(len(unguarded), "is", "are"), reasons(unguarded),
				pick(len(unguarded), "its", "their"), unguardedFix(unguarded, md.own))
		}
		for _, il := range append(append([]*ifaceLine(nil), md.ils.globbed...), md.ils.dflt) {
			if il == nil {
				continue
			}
			var routed []*Method
			guards := false
			for _, m := range in.Methods {
				if md.ils.lineFor(m.Name) == il {
					routed = append(routed, m)
					guards = guards || m.Route != nil
				}
			}
			if guards {
				// Every method it guards may name a breaker of its own:
				// they keep the line's line keys, but not its name. A
				// chain's default line still gives its settings to the
				// fallbacks' breakers (SPEC §6).
				if il == md.ils.dflt && in.Chain {
					continue
				}
				if keys := idleNameKeys(md.pkg, used, il); len(keys) > 0 {
					var own []string
					for _, m := range routed {
						if m.Route != nil {
							own = append(own, m.Name+": name="+m.Route.Name)
						}
					}
					b.warnf(il.l.Pos, "%s: no method takes this line's breaker %q: every method it guards names its own (%s)%s; remove the line's name and its settings, or the name= of a method's line", in.Name,
						il.route.Name, firstOf(own), doNothing(keys))
				}
				continue
			}
			idle := doNothing(idleKeys(md.pkg, used, il))
			switch {
			case len(routed) > 0:
				b.warnf(il.l.Pos, "%s: this line guards nothing: the %s it routes %s unguarded (%s)%s; remove the line, or return an error from %s", in.Name,
					count(len(routed), "method"), pick(len(routed), "is", "are"), reasons(routed), idle, pick(len(routed), "that method", "those methods"))
			case il.globs != nil:
				b.warnf(il.l.Pos, "%s: this line routes no method: the methods its methods= matches are routed by earlier lines%s; remove the line, or narrow the earlier lines' methods=", in.Name, idle)
			default:
				b.warnf(il.l.Pos, "%s: this line, the default route, routes no method: every method matches a line's methods=%s; remove the line, or narrow the others' methods=", in.Name, idle)
			}
		}
	}
}

// guardedClose warns of a guarded method of md's interface of io.Closer's
// shape, Close() error, without a line of its own: closing a client is
// local, not a call to the upstream, yet an OPEN breaker would refuse it
// and leave the client (its pool, its connections) open, as a shutdown
// during an outage does. An embedded one is declared again beside the
// embedding, which Go allows, to take //breaker:skip.
func (b *builder) guardedClose(md *modelled) {
	in := md.in
	i := slices.IndexFunc(in.Methods, func(m *Method) bool { return m.Name == "Close" })
	if i < 0 {
		return
	}
	m := in.Methods[i]
	if m.Route == nil || m.Route.Method != "" || m.Sig.Params().Len() != 0 || m.Sig.Results().Len() != 1 || !lastIsError(m.Sig) {
		return
	}
	fix := "write //breaker:skip on the line above it"
	pos := in.Pos
	if md.own["Close"] {
		if f := methodOf(in.Obj.Type(), "Close"); f != nil {
			pos = b.fset.Position(f.Pos())
		}
	} else {
		fix = "declare it in " + in.Name + "'s interface, below what embeds it, as the two lines //breaker:skip and Close() error (Go allows an embedded method to be declared again with its signature)"
	}
	b.warnf(pos, "%s.Close: it goes through breaker %q, so an OPEN breaker would refuse Close() and leave the client open (its pool, its connections), as a shutdown during an outage does: closing is local, not a call to the upstream; %s", in.Name, m.Route.Name, fix)
}

// iteratorsWithError warns, once for in, of its guarded methods that
// return an iterator beside their error ((iter.Seq2[K, V], error), an
// iter.Seq, a func(yield func(...) bool) of its own): the breaker judges
// the call that returns it, and the iteration runs after the call has
// returned, so the errors the iterator yields, and the failures of the
// calls it makes, are never counted; a method that returns an iterator
// alone is delegated unguarded, and warned of as such.
func (b *builder) iteratorsWithError(in *Interface) {
	var ms []*Method
	for _, m := range in.Methods {
		if m.Route == nil || m.Carrier != nil || !lastIsError(m.Sig) {
			continue
		}
		for i := range m.Sig.Results().Len() - 1 {
			if isIterator(m.Sig.Results().At(i).Type()) {
				ms = append(ms, m)
				break
			}
		}
	}
	if len(ms) == 0 {
		return
	}
	b.warnf(in.Pos, "%s: %d of its %s %s an iterator beside %s error (%s), so no breaker sees the errors the iterator yields after the call returns, nor the failures of the calls it makes: only the call that returns it is guarded; return the items themselves (a slice and an error), or have the iterator fetch each page through a guarded method", in.Name,
		len(ms), count(len(in.Methods), "method"), pick(len(ms), "returns", "return"), pick(len(ms), "its", "their"), firstNames(ms))
}

// isIterator reports whether t is a range-over-func iterator:
// func(yield func(...) bool), as iter.Seq and iter.Seq2 are.
func isIterator(t types.Type) bool {
	sig, ok := t.Underlying().(*types.Signature)
	if !ok || sig.Params().Len() != 1 || sig.Results().Len() != 0 || sig.Variadic() {
		return false
	}
	yield, ok := sig.Params().At(0).Type().Underlying().(*types.Signature)
	return ok && yield.Params().Len() <= 2 && !yield.Variadic() && yield.Results().Len() == 1 &&
		types.Identical(yield.Results().At(0).Type(), types.Typ[types.Bool])
}

// idleKeys lists, as written, the keys of the lines ls (of package pkg)
// that do nothing because the lines guard no method: every key but methods
// and the interface's own (chain), and, when the line's breaker name guards
// a method elsewhere in the package, but the name and its settings.
func idleKeys(pkg string, used map[nameKey]bool, ls ...*ifaceLine) []string {
	var out []string
	for _, il := range ls {
		shared := used[nameKey{pkg, il.route.Name}]
		for _, o := range il.l.Options {
			sc := annotation.KeyScope(o.Key)
			switch {
			case o.Key == "methods", sc == annotation.InterfaceScope:
			case shared && (o.Key == "name" || sc == annotation.NameScope):
			case o.Raw == "":
				out = append(out, o.Key)
			default:
				out = append(out, o.Key+"="+o.Raw)
			}
		}
	}
	return out
}

// idleNameKeys lists, as written, the keys of the line il (of package pkg)
// that belong to its breaker's name (maxwait included: it bounds that
// name's waits), when no method of the package takes that name, or nil.
func idleNameKeys(pkg string, used map[nameKey]bool, il *ifaceLine) []string {
	if used[nameKey{pkg, il.route.Name}] {
		return nil
	}
	var out []string
	for _, o := range il.l.Options {
		if o.Key == "name" || o.Key == "maxwait" || annotation.KeyScope(o.Key) == annotation.NameScope {
			out = append(out, o.Key+"="+o.Raw)
		}
	}
	return out
}

// firstOf shows the first three of ss, and how many more.
func firstOf(ss []string) string {
	if len(ss) > 3 {
		return strings.Join(ss[:3], ", ") + fmt.Sprintf(" and %d more", len(ss)-3)
	}
	return strings.Join(ss, ", ")
}

// doNothing says that the keys have no effect, as the timeout and hedge
// warnings word it, or "" for none.
func doNothing(keys []string) string {
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return ", so its key " + keys[0] + " has no effect"
	}
	return ", so its keys " + strings.Join(keys, " ") + " have no effect"
}

// firstNames shows the first three names of ms, and how many more.
func firstNames(ms []*Method) string {
	var names []string
	for i, m := range ms {
		if i == 3 {
			names[len(names)-1] += fmt.Sprintf(" and %d more", len(ms)-3)
			break
		}
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// reasons shows the first names of ms grouped by why each is unguarded:
// "Name, Size: no error result; Ping: //breaker:skip".
func reasons(ms []*Method) string {
	var order []string
	by := map[string][]*Method{}
	for _, m := range ms {
		w := whyText(m.Why)
		if m.ErrLike != "" {
			w = "returns " + m.ErrLike + ", not error"
		}
		if by[w] == nil {
			order = append(order, w)
		}
		by[w] = append(by[w], m)
	}
	var parts []string
	for _, w := range order {
		parts = append(parts, firstNames(by[w])+": "+w)
	}
	return strings.Join(parts, "; ")
}

func whyText(w string) string {
	switch w {
	case "skip":
		return "//breaker:skip"
	case "noerror":
		return "no error result"
	case "noroute":
		return "no line routes it"
	case "local":
		return "go-redis's, local: no ctx, nothing sent to Redis"
	}
	return w
}

// unguardedFix says how to guard the methods ms, or to say they are not;
// own are the methods written in the interface literal: one that comes
// from an embedded interface takes a line once redeclared there.
func unguardedFix(ms []*Method, own map[string]bool) string {
	them := pick(len(ms), "it", "them")
	var fixes []string
	for _, why := range []string{"noerror", "noroute"} {
		for _, m := range ms {
			if m.Why != why {
				continue
			}
			if why == "noerror" {
				fix := "return an error from " + them
				if slices.ContainsFunc(ms, func(m *Method) bool { return m.ErrLike != "" }) {
					fix = "return the type error from " + them // not an error type of their own
				}
				fixes = append(fixes, fix)
			} else {
				fixes = append(fixes, "route "+them+" (a line's methods=, or a line without methods=)")
			}
			break
		}
	}
	skip := "write //breaker:skip above " + pick(len(ms), "it", "each")
	for _, m := range ms {
		if !own[m.Name] {
			skip += " (redeclare an embedded method in the interface to give it a line)"
			break
		}
	}
	fixes = append(fixes, skip, "or annotate a narrower interface without "+them)
	return strings.Join(fixes, ", ")
}

// nothingFix says what to do with an interface that guards nothing.
func nothingFix(unguarded []*Method) string {
	for _, m := range unguarded {
		if m.Why == "noroute" {
			return "route a method with an error result, or remove the annotation"
		}
	}
	for _, m := range unguarded {
		if m.Why == "noerror" {
			return "return an error from the methods to guard, or remove the annotation"
		}
	}
	return "remove the annotation"
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// pick returns one for n == 1, else many.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
