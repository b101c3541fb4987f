package ifacegen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Breakers per key (SPEC §15) and hedged chains (SPEC §9), drawn once
// every interface is annotated, from g.rKey, a stream of their own, so
// that a seed that draws neither keeps the package it had before.
//
// hedge (and hedges) go on chain lines, more often where they reach a
// judged method or one returning an *http.Response or a *sql.Row, whose
// races drop the answers no caller sees (breakerimpl.RaceArgsWith and
// RaceArgsValidWith, with RaceHooks); on a method line only where the
// method has a ctx first, or an *http.Request whose ctx it takes (else it
// is an error; reaching such a method from an interface line is a
// warning, which the fuzzer allows).
//
// key=PARAM goes on an interface line whose routed methods are all the
// interface's own (every one is given the parameter, of a string or
// integer kind, a named string or integer type, or a fmt.Stringer), and
// on method lines. A keyed name is keyed on every route: it is a name no
// other line gives, or a fresh one; a method line that would inherit the
// key but names another breaker, or changes a line key the family shares
// (SPEC §15, lineDiff), clears it (key=-, with a fresh name). keys= and
// maxopen= come with it now and then. The forwarding test looks up the
// key's breaker, "<name>/<value>", in the registry; a name drawn for the
// trip test (threshold 1 or 2, nothing that refuses a call) gets a
// subtest where a failing key trips alone, and under maxopen the second
// failing key stays CLOSED.

func (g *gen) kchance(p float64) bool { return g.rKey.Float64() < p }
func (g *gen) kintn(n int) int        { return g.rKey.IntN(n) }
func kpick[T any](g *gen, xs []T) T   { return xs[g.rKey.IntN(len(xs))] }

// keyFam is a keyed breaker name.
type keyFam struct {
	// threshold > 0: the name's settings are only that threshold (and
	// keys, maxopen): the fuzz test trips its keys.
	threshold int
	maxopen   int // percent; 0 for none
}

// kset gives key the value val on l, in place of its own.
func (g *gen) kset(l *line, key, val string) {
	for i, o := range l.opts {
		if o.key == key {
			l.opts[i].val = val
			return
		}
	}
	l.opts = slices.Insert(l.opts, g.kintn(len(l.opts)+1), opt{key: key, val: val})
}

// drawKeysAndHedges draws hedge and key on the annotated interfaces.
func (g *gen) drawKeysAndHedges() {
	g.keyFams = map[string]*keyFam{}
	for _, in := range g.annotated {
		g.drawHedges(in)
	}
	for _, in := range g.annotated {
		g.drawKeys(in)
	}
}

// hedgeSpecial reports whether a hedged chain races m's answers through a
// drop or a valid func: m is judged, or returns an *http.Response or a
// *sql.Row.
func (g *gen) hedgeSpecial(in *iface, m *method) bool {
	return g.judged(in, m) || g.judges(in, m) || slices.ContainsFunc(m.ft.results, isResponseT) || g.isRow(m)
}

// hedgeable reports whether a method line of m may give hedge: m has a
// ctx first and no *http.Request parameter.
func hedgeable(m *method) bool {
	return len(m.ft.params) > 0 && (isContext(m.ft.params[0]) || isRequestT(m.ft.params[0]))
}

func isResponseT(t typ) bool { return isPtrToNamed(t, stdResponse) }
func isRequestT(t typ) bool  { return isPtrToNamed(t, stdRequest) }

func isPtrToNamed(t typ, d *named) bool {
	p, ok := t.(ptrT)
	if !ok {
		return false
	}
	n, ok := p.elem.(namedT)
	return ok && n.d == d
}

// drawHedges gives some lines of in, a chain, hedge and hedges.
func (g *gen) drawHedges(in *iface) {
	if g.opts.Chains != ChainsFlag || !in.chain {
		return
	}
	ms := in.methodSet(nil)
	give := func(l *line) {
		g.kset(l, "hedge", kpick(g, []string{"1ms", "10ms", "50ms", "1s", "1h"}))
		if g.kchance(0.3) {
			g.kset(l, "hedges", strconv.Itoa(1+g.kintn(3)))
		}
	}
	for _, l := range in.lines {
		p := 0.12
		for _, m := range ms {
			if in.lineFor(m.name) == l && g.routed(in, m) && g.hedgeSpecial(in, m) {
				p = 0.45
			}
		}
		if g.kchance(p) {
			give(l)
		}
	}
	for _, m := range in.methods {
		if !g.routed(in, m) || !hedgeable(m) || !g.hedgeSpecial(in, m) {
			continue
		}
		resp := slices.ContainsFunc(m.ft.results, isResponseT)
		if g.kchance(0.3) || resp && g.kchance(0.6) {
			if m.line == nil {
				m.line = &line{}
			}
			give(m.line)
		}
		if resp && g.effective(in, m, "valid") == "" && g.kchance(0.6) {
			// A valid func beside a held answer: the race judges and
			// drops (RaceArgsValidWith).
			if m.line == nil {
				m.line = &line{}
			}
			g.kset(m.line, "valid", g.judgeFuncFor(false, answer(m), in))
		}
	}
}

// keyParamNames are the names a key parameter takes: plain ones, and
// names of the keyed wrapper's locals (k, call, ok) and of its imports.
var keyParamNames = []string{"key", "id", "code", "sym", "tenant", "host", "k", "call", "ok", "fam", "w", "err", "breakerimpl", "runtime", "fmt"}

// keyParamName is a name of keyParamNames that no result of ms takes.
func (g *gen) keyParamName(ms ...*method) string {
	for {
		n := kpick(g, keyParamNames)
		if !slices.ContainsFunc(ms, func(m *method) bool { return slices.Contains(m.rnames, n) }) {
			return n
		}
	}
}

// lineName is the breaker name of l, a line of in.
func (in *iface) lineName(l *line) string {
	if v, ok := l.get("name"); ok {
		return v
	}
	return strings.ToLower(in.name)
}

// routeName is the breaker name of m's route in in (m routed).
func (in *iface) routeName(m string) string {
	if own := in.own(m); own != nil {
		if v, ok := own.line.get("name"); ok {
			return v
		}
	}
	if l := in.lineFor(m); l != nil {
		return in.lineName(l)
	}
	return strings.ToLower(in.name)
}

// nameUses counts the lines of the package that name each breaker.
func (g *gen) nameUses() map[string]int {
	n := map[string]int{}
	for _, in := range g.annotated {
		for _, l := range in.lines {
			n[in.lineName(l)]++
		}
		for _, m := range in.methods {
			if m.line != nil && !m.line.skip() {
				n[in.routeName(m.name)]++
			}
		}
	}
	return n
}

// familyKeys are the line keys a keyed name's routes in one interface
// must agree on (SPEC §15; model's lineDiff).
var familyKeys = []string{"timeout", "maxwait", "exclude", "attempts", "backoff", "budget", "hedge", "hedges"}

// drawKeys keys some lines of in.
func (g *gen) drawKeys(in *iface) {
	if in.form == formAlias || in.form == formDefined {
		return
	}
	for _, l := range in.lines {
		if g.kchance(0.2) {
			g.keyIfaceLine(in, l)
		}
	}
	for _, m := range in.methods {
		if g.guardable(m) && !m.line.skip() && g.kchance(0.08) {
			g.keyMethodLine(in, m)
		}
	}
}

// keyIfaceLine keys l, a line of in, when every method it routes is in's
// own and no other line names its breaker.
func (g *gen) keyIfaceLine(in *iface, l *line) {
	name := in.lineName(l)
	var fam, clear []*method
	members := 1 // the lines that name the breaker as l's family
	for _, m := range in.methodSet(nil) {
		if in.lineFor(m.name) != l || !g.routed(in, m) {
			continue
		}
		own := in.own(m.name)
		if own == nil {
			return // embedded: no parameter to give, no line to clear it on
		}
		if own.line == nil {
			fam = append(fam, own)
			continue
		}
		if in.routeName(m.name) == name {
			members++
		}
		named := own.line.opts != nil && in.routeName(m.name) != name
		if named || slices.ContainsFunc(familyKeys, func(k string) bool { _, ok := own.line.get(k); return ok }) || g.kchance(0.15) {
			clear = append(clear, own)
		} else {
			fam = append(fam, own)
		}
	}
	if len(fam) == 0 || g.nameUses()[name] != members {
		return
	}
	param := g.keyParamName(fam...)
	for _, m := range fam {
		g.giveKeyParam(in, m, param)
	}
	for _, m := range clear {
		g.kset(m.line, "key", "-")
		if in.routeName(m.name) == name {
			g.kset(m.line, "name", g.freshKeyName())
		}
	}
	g.kset(l, "key", param)
	g.keyName(l, name)
}

// keyMethodLine keys the line of m, one of in's own methods, with a name
// of its own.
func (g *gen) keyMethodLine(in *iface, m *method) {
	if g.effective(in, m, "key") != "" {
		return // keyed by its interface line
	}
	if _, ok := m.line.get("key"); ok {
		return
	}
	if m.line == nil {
		m.line = &line{}
	}
	name, ok := m.line.get("name")
	if !ok || g.nameUses()[name] != 1 {
		name = g.freshKeyName()
		g.kset(m.line, "name", name)
		// A fresh name: maxwait was for the other name's limiter.
		m.line.opts = slices.DeleteFunc(m.line.opts, func(o opt) bool { return o.key == "maxwait" })
	}
	param := g.keyParamName(m)
	g.giveKeyParam(in, m, param)
	g.kset(m.line, "key", param)
	g.keyName(m.line, name)
}

// freshKeyName is a breaker name no line gives.
func (g *gen) freshKeyName() string {
	g.keyNames++
	return fmt.Sprintf("s%d.k%d", g.seed, g.keyNames)
}

// nameKeys are the keys that belong to a name (nameOpts, windowOpts).
var nameKeys = []string{"threshold", "reset", "halfopen", "successes", "ratelimit", "window", "minimum", "failrate", "slow", "slowrate", "inflight", "concurrency"}

// keyName gives l, the only line of the keyed name, keys= and maxopen=
// now and then; for the trip test, in place of the name's settings, a
// threshold of 1 or 2.
func (g *gen) keyName(l *line, name string) {
	f := &keyFam{}
	g.keyFams[name] = f
	if g.kchance(0.5) {
		l.opts = slices.DeleteFunc(l.opts, func(o opt) bool { return slices.Contains(nameKeys, o.key) || o.key == "maxwait" })
		f.threshold = 1 + g.kintn(2)
		g.kset(l, "threshold", strconv.Itoa(f.threshold))
		if g.kchance(0.4) {
			g.kset(l, "keys", strconv.Itoa(2+g.kintn(100)))
		}
		if g.kchance(0.4) {
			f.maxopen = 1 + g.kintn(99)
			g.kset(l, "maxopen", strconv.Itoa(f.maxopen)+"%")
		}
		return
	}
	if g.kchance(0.4) {
		g.kset(l, "keys", kpick(g, []string{"1", "2", "10", "1000", "100000"}))
	}
	if g.kchance(0.3) {
		g.kset(l, "maxopen", strconv.Itoa(1+g.kintn(100))+"%")
	}
}

// giveKeyParam gives m, one of in's own methods, a parameter called param
// that may key a breaker: its own when it fits, else one of a key type in
// place of the parameter of that name, or a new one after the ctx.
func (g *gen) giveKeyParam(in *iface, m *method, param string) {
	if m.pnames == nil {
		for i := range m.ft.params {
			m.pnames = append(m.pnames, "u"+strconv.Itoa(i))
		}
	}
	last := len(m.ft.params) - 1
	i := slices.Index(m.pnames, param)
	switch {
	case i == 0 && isContext(m.ft.params[0]):
		n := "ctx"
		for k := 2; slices.Contains(m.pnames, n); k++ {
			n = "ctx" + strconv.Itoa(k)
		}
		m.pnames[0] = n
	case i >= 0 && keyable(m.ft.params[i]) && !(m.ft.variadic && i == last):
		return
	case i >= 0:
		if m.ft.variadic && i == last {
			m.ft.variadic = false
		}
		m.ft.params[i] = g.keyParamType(in)
		return
	}
	lo := 0
	if len(m.ft.params) > 0 && isContext(m.ft.params[0]) {
		lo = 1
	}
	hi := len(m.ft.params)
	if m.ft.variadic {
		hi--
	}
	at := lo + g.kintn(hi-lo+1)
	m.ft.params = slices.Insert(m.ft.params, at, g.keyParamType(in))
	m.pnames = slices.Insert(m.pnames, at, param)
}

// keyParamType is a type that may key a breaker, in in.
func (g *gen) keyParamType(in *iface) typ {
	var stringers []typ
	for _, p := range in.tparams {
		if p.cons == constraints[3] || p.cons == constraints[5] {
			stringers = append(stringers, tparamT{p})
		}
	}
	switch k := g.kintn(20); {
	case k < 6:
		return basicT{kpick(g, []string{"string", "int", "int64", "uint16", "byte", "rune", "uint"})}
	case k < 8:
		return namedT{d: g.localSym()}
	case k < 10:
		return namedT{d: kpick(g, []*named{g.localID(), g.localCode(), g.depLevel()})}
	case k < 12:
		return namedT{d: kpick(g, []*named{stdDuration, stdLevel, stdTime})}
	case k < 14:
		return namedT{d: stdStringer}
	case k < 16:
		return namedT{d: g.localTag()}
	case len(stringers) > 0:
		return kpick(g, stringers)
	}
	return basicT{kpick(g, []string{"string", "int64", "uint"})}
}

// keyKind is how the generator keys by a value of t: "string", "int",
// "uint" or "stringer" (its String()); "" when t cannot key a breaker.
func keyKind(t typ) string {
	switch t := t.(type) {
	case basicT:
		switch t.name {
		case "string":
			return "string"
		case "int", "int64", "rune", "int8", "int16", "int32":
			return "int"
		case "uint", "uint16", "byte", "uint8", "uint32", "uint64", "uintptr":
			return "uint"
		}
	case tparamT:
		if t.p.cons == constraints[3] || t.p.cons == constraints[5] {
			return "stringer"
		}
	case namedT:
		switch t.d {
		case stdDuration, stdLevel:
			return "int"
		case stdStringer, stdTime:
			return "stringer"
		}
		if t.d.stringer {
			return "stringer"
		}
		if t.d.under != nil && t.d.iface == nil && len(t.d.tparams) == 0 {
			return keyKind(t.d.under)
		}
	}
	return ""
}

func keyable(t typ) bool { return keyKind(t) != "" }

// localSym is a defined string type of the local package.
func (g *gen) localSym() *named {
	if g.sym == nil {
		g.sym = &named{pkg: g.local, name: "Sym", under: basicT{"string"}}
		g.sym.declare = func(*file) string { return "// Sym is a defined string type.\ntype Sym string" }
		g.localTypes = append(g.localTypes, g.sym)
	}
	return g.sym
}

// localTag is a struct of the local package that is a fmt.Stringer.
func (g *gen) localTag() *named {
	if g.tagT == nil {
		g.tagT = &named{pkg: g.local, name: "Tag", stringer: true, under: structT{[]field{{name: "N", t: basicT{"int"}}}}}
		g.tagT.declare = func(*file) string {
			return "// Tag is a struct that prints itself.\ntype Tag struct{ N int }\n\n// String is the tag's text.\nfunc (t Tag) String() string { return \"t\" + string(rune('a'+t.N%26)) }"
		}
		g.localTypes = append(g.localTypes, g.tagT)
	}
	return g.tagT
}

// keyOf is the index of the parameter that keys m's route in in, and its
// kind as declared (keyKind); -1 when the route is not keyed.
func (g *gen) keyOf(in *iface, m *method) (int, string) {
	p := g.effective(in, m, "key")
	if p == "" {
		return -1, ""
	}
	i := slices.Index(m.pnames, p)
	if i < 0 {
		return -1, ""
	}
	for _, d := range in.methodSet(nil) {
		if d.name == m.name {
			return i, keyKind(d.ft.params[i])
		}
	}
	return -1, ""
}

// keyText is the text of the key a wrapper makes of the value expr of
// kind kind (keyKind), in the test file f.
func (f *file) keyText(kind, expr string) string {
	switch kind {
	case "string":
		return "string(" + expr + ")"
	case "int":
		return f.qual(pFmt) + "Sprint(int64(" + expr + "))"
	case "uint":
		return f.qual(pFmt) + "Sprint(uint64(" + expr + "))"
	}
	return expr + ".String()"
}
