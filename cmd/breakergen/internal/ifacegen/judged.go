package ifacegen

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Judged methods (SPEC §6 and §12): a last result that carries its error
// (a carrier with Err and SetErr, *sql.Row) or an *http.Response, the
// failure, valid and stale keys, and the retry keys attempts, backoff and
// budget. Every decision here is drawn from g.rJudge, a stream of its
// own, so that a seed whose draws give it none of them keeps the
// interfaces it had before.

var (
	pSQL = &pkg{"database/sql", "sql"}
	// *sql.Row carries its error; its zero value's Err() is nil.
	stdRow = &named{pkg: pSQL, name: "Row"}
)

// judgeNames are names the valid and failure funcs may take: names of the
// wrapper's locals and of the packages its body may import (a judged
// method's body names the func, the carrier's package, sqlimpl). The
// parameters of some methods take them too.
var judgeNames = []string{"ok", "valid", "failed", "judge", "good", "call", "next", "res", "result", "w", "c", "ctx", "err", "cmd", "row", "sql", "sqlimpl", "httpguard", "breakerimpl", "fmt", "io", "reg", "tries", "zero", "args", "impl", "done", "rec", "runtime", "errors", "context", "http"}

func (g *gen) jchance(p float64) bool { return g.rJudge.Float64() < p }
func (g *gen) jintn(n int) int        { return g.rJudge.IntN(n) }
func jpick[T any](g *gen, xs []T) T   { return xs[g.rJudge.IntN(len(xs))] }

// drawJudgeNames shuffles the names the valid and failure funcs take, in
// the order they take them, leaving out the names the package declares.
func (g *gen) drawJudgeNames() {
	for _, n := range judgeNames {
		if !g.reserved[n] {
			g.judgePool = append(g.judgePool, n)
		}
	}
	g.rJudge.Shuffle(len(g.judgePool), func(i, j int) { g.judgePool[i], g.judgePool[j] = g.judgePool[j], g.judgePool[i] })
}

// paramName is, now and then, the name of a valid or failure func instead
// of name, so that a parameter shadows the func its method's body calls.
func (g *gen) paramName(name string, used map[string]bool) string {
	if !g.jchance(0.08) {
		return name
	}
	n := g.judgePool[g.jintn(min(4, len(g.judgePool)))]
	if used[n] {
		return name
	}
	delete(used, name)
	used[n] = true
	return n
}

// withCarrier makes the last result of m, a method of a package of scope
// sc, now and then a result that carries its error, in place of what it
// was (an error or not); alone, as go-redis's commands, half the time.
func (g *gen) withCarrier(m *method, sc *scope) {
	p := 0.12
	if sc.self != nil && sc.self.self.val != nil {
		p = 0.16 // an annotated interface's own method
	}
	if !g.jchance(p) {
		return
	}
	var c typ
	switch k := g.jintn(20); {
	case sc.p != g.local && k < 14, sc.p == g.local && k < 6:
		c = ptrT{namedT{d: g.depCmd()}}
	case sc.p != g.local, k < 10:
		c = ptrT{namedT{d: stdRow}}
	case k < 16:
		c = ptrT{namedT{d: g.localCmd()}}
	default:
		// A generic carrier, of a type parameter or a plain type.
		var arg typ
		if len(sc.tparams) > 0 && g.jchance(0.5) {
			arg = tparamT{jpick(g, sc.tparams)}
		} else {
			arg = jpick(g, []typ{basicT{"int"}, basicT{"string"}, namedT{d: g.localT0()}})
		}
		c = ptrT{namedT{g.localReply(), []typ{arg}}}
	}
	if len(m.pnames) > 0 && g.jchance(0.3) {
		// A parameter named like what the wrapper's body names to make a
		// refusal: the carrier's package or type.
		var n string
		switch d := c.(ptrT).elem.(namedT).d; {
		case d == stdRow:
			n = jpick(g, []string{"sql", "sqlimpl"})
		case d.pkg != sc.p:
			n = d.pkg.name
		default:
			n = d.name
		}
		if !slices.Contains(m.pnames, n) {
			m.pnames[g.jintn(len(m.pnames))] = n
		}
	}
	rs := m.ft.results
	switch {
	case len(rs) == 0 || g.jchance(0.5):
		m.ft.results = []typ{c}
		if m.rnames != nil {
			m.rnames = m.rnames[len(m.rnames)-1:]
		}
	default:
		m.ft.results = append(rs[:len(rs)-1:len(rs)-1], c)
	}
}

// withResponse makes m, now and then, a RoundTrip of its own: an
// *http.Response and an error (a failure func judges the response), and
// half the time an *http.Request as its only parameter (whose ctx the
// wrapper uses).
func (g *gen) withResponse(m *method) {
	if !g.jchance(0.04) {
		return
	}
	m.ft.results = []typ{ptrT{namedT{d: stdResponse}}, namedT{d: stdError}}
	m.rnames = nil
	if g.jchance(0.5) {
		m.ft.params = []typ{ptrT{namedT{d: stdRequest}}}
		m.ft.variadic = false
		if m.pnames != nil {
			m.pnames = m.pnames[:1]
			if m.pnames[0] == "_" {
				m.pnames[0] = "req"
			}
		}
	}
}

// localCmd is a carrier of the local package.
func (g *gen) localCmd() *named {
	if g.cmd == nil {
		g.cmd = &named{pkg: g.local, name: "Cmd", under: structT{[]field{{name: "err", t: namedT{d: stdError}}, {name: "val", t: basicT{"int"}}}}}
		g.cmd.declare = func(*file) string {
			return `// Cmd carries its error, like a go-redis command.
type Cmd struct {
	err error
	val int
}

// Err is the error the call ended with.
func (c *Cmd) Err() error { return c.err }

// SetErr sets the error Err returns.
func (c *Cmd) SetErr(err error) { c.err = err }`
		}
		g.localTypes = append(g.localTypes, g.cmd)
	}
	return g.cmd
}

// localReply is a generic carrier of the local package.
func (g *gen) localReply() *named {
	if g.reply == nil {
		p := &tparam{name: "T", cons: constraints[0]}
		g.reply = &named{pkg: g.local, name: "Reply", tparams: []*tparam{p}, under: structT{[]field{{name: "err", t: namedT{d: stdError}}, {name: "V", t: tparamT{p}}}}}
		g.reply.declare = func(*file) string {
			return `// Reply is a generic result that carries its error.
type Reply[T any] struct {
	err error
	V   T
}

// Err is the error the call ended with.
func (r *Reply[T]) Err() error { return r.err }

// SetErr sets the error Err returns.
func (r *Reply[T]) SetErr(err error) { r.err = err }`
		}
		g.localTypes = append(g.localTypes, g.reply)
	}
	return g.reply
}

// depCmd is a carrier of the other package, whose Err and SetErr are
// promoted from an embedded unexported struct, as go-redis's are.
func (g *gen) depCmd() *named {
	if g.dcmd == nil {
		g.dcmd = &named{pkg: g.dep, name: "StringCmd", under: structT{[]field{{name: "val", t: basicT{"string"}}}}}
		g.dcmd.declare = func(*file) string {
			return `type baseCmd struct{ err error }

// Err is the error the call ended with.
func (c *baseCmd) Err() error { return c.err }

// SetErr sets the error Err returns.
func (c *baseCmd) SetErr(e error) { c.err = e }

// StringCmd carries its error, as go-redis's commands do.
type StringCmd struct {
	baseCmd
	val string
}`
		}
		g.depTypes = append(g.depTypes, g.dcmd)
	}
	return g.dcmd
}

// carrierOf is the named type t points to when t carries its error.
func (g *gen) carrierOf(t typ) *named {
	p, ok := t.(ptrT)
	if !ok {
		return nil
	}
	n, ok := p.elem.(namedT)
	if !ok {
		return nil
	}
	switch d := n.d; {
	case d == stdRow, d != nil && (d == g.cmd || d == g.reply || d == g.dcmd):
		return d
	}
	return nil
}

// errLast reports whether m's last result is error.
func errLast(m *method) bool {
	rs := m.ft.results
	return len(rs) > 0 && isError(rs[len(rs)-1])
}

// guardable reports whether a route guards m: its last result is error
// or carries its error.
func (g *gen) guardable(m *method) bool {
	rs := m.ft.results
	return errLast(m) || len(rs) > 0 && g.carrierOf(rs[len(rs)-1]) != nil
}

// answer is what valid and failure funcs take: m's results but the error
// (a carrier included).
func answer(m *method) []typ {
	if errLast(m) {
		return m.ft.results[:len(m.ft.results)-1]
	}
	return m.ft.results
}

// judgeFunc is a valid or failure func of the local package.
type judgeFunc struct {
	name    string
	failure bool // func(...) error, else func(...) bool
	params  []typ
	file    int
}

// judgeFuncFor is the name of a failure func (else a valid func) taking
// params, for a route of in: declared in in's file, one per kind, file
// and parameter list.
func (g *gen) judgeFuncFor(failure bool, params []typ, in *iface) string {
	k := g.key(funcT{params: params})
	for _, f := range g.funcs {
		if f.failure == failure && f.file == in.file && g.key(funcT{params: f.params}) == k && g.nameFits(f.name, in) {
			return f.name
		}
	}
	name := g.funcName(in)
	g.funcs = append(g.funcs, &judgeFunc{name: name, failure: failure, params: params, file: in.file})
	return name
}

// funcName is the next name of judgePool no func has taken, for a func of
// a route of in, declared in in's file.
func (g *gen) funcName(in *iface) string {
	for _, n := range g.judgePool {
		switch {
		case slices.ContainsFunc(g.funcs, func(f *judgeFunc) bool { return f.name == n }):
		case !g.nameFits(n, in):
		default:
			return n
		}
	}
	return "judge" + strconv.Itoa(len(g.funcs))
}

// nameFits reports whether a route of in may name a func called n: not
// when a type parameter of in has its name (it would hide the func in the
// wrapper, an error at generation time).
func (g *gen) nameFits(n string, in *iface) bool {
	return !slices.ContainsFunc(in.tparams, func(p *tparam) bool { return p.name == n })
}

// writeJudgeFuncs writes the valid and failure funcs of file i: each
// counts its calls in fzJudged, and judges every answer data (valid
// returns true) that did not fail (failure returns nil).
func (g *gen) writeJudgeFuncs(f *file, b *strings.Builder, i int) {
	if i == 0 && len(g.funcs) > 0 {
		b.WriteString("// fzJudged counts the calls of the valid and failure funcs.\nvar fzJudged int\n\n")
	}
	for _, jf := range g.funcs {
		if jf.file != i {
			continue
		}
		ps := make([]string, len(jf.params))
		for k, p := range jf.params {
			ps[k] = f.ts(p)
		}
		if jf.failure {
			fmt.Fprintf(b, "// %s judges an answer that came without an error: never a failure.\nfunc %s(%s) error {\n\tfzJudged++\n\treturn nil\n}\n\n", jf.name, jf.name, strings.Join(ps, ", "))
		} else {
			fmt.Fprintf(b, "// %s judges a result: always data.\nfunc %s(%s) bool {\n\tfzJudged++\n\treturn true\n}\n\n", jf.name, jf.name, strings.Join(ps, ", "))
		}
	}
}

// hasTParam reports whether t refers to a type parameter.
func hasTParam(t typ) bool {
	switch t := t.(type) {
	case tparamT:
		return true
	case namedT:
		return slices.ContainsFunc(t.args, hasTParam)
	case ptrT:
		return hasTParam(t.elem)
	case sliceT:
		return hasTParam(t.elem)
	case arrayT:
		return hasTParam(t.elem)
	case mapT:
		return hasTParam(t.key) || hasTParam(t.elem)
	case chanT:
		return hasTParam(t.elem)
	case funcT:
		return slices.ContainsFunc(t.params, hasTParam) || slices.ContainsFunc(t.results, hasTParam)
	case structT:
		return slices.ContainsFunc(t.fields, func(f field) bool { return hasTParam(f.t) })
	}
	return false
}

// isComparable reports whether t is comparable as go/types says it (so
// that it may key a stale cache); false when the fuzzer is not sure.
func isComparable(t typ) bool {
	switch t := t.(type) {
	case basicT, ptrT, chanT, litT:
		return true
	case tparamT:
		return t.p.cons.keyable
	case arrayT:
		return isComparable(t.elem)
	case structT:
		for _, f := range t.fields {
			if !isComparable(f.t) {
				return false
			}
		}
		return true
	case namedT:
		switch t.d {
		case stdTime, stdDuration, stdFileMode, stdLevel, stdPointer:
			return true
		}
		if t.d.iface != nil {
			return true // an interface: not cached when its value is not
		}
		if t.d.under != nil {
			return isComparable(subst(t.d.under, bind(t.d.tparams, t.args)))
		}
	}
	return false
}

// staleable reports whether a stale cache may keep m's results: there is
// one besides the error, none is read once (*sql.Row, *http.Response, an
// io.Reader), and every argument but a first ctx is comparable.
func (g *gen) staleable(m *method) bool {
	if len(answer(m)) == 0 {
		return false
	}
	for _, r := range m.ft.results {
		if p, ok := r.(ptrT); ok {
			if n, ok := p.elem.(namedT); ok && (n.d == stdRow || n.d == stdResponse) {
				return false
			}
		}
		if mayRead(r, 0) {
			return false // an io.Reader: read once
		}
		if mayUseLater(r, 0) {
			return false // a channel, a func, or a value keeping its ctx: used up once
		}
	}
	for i, p := range m.ft.params {
		if i == 0 && isContext(p) {
			continue
		}
		if !isComparable(p) {
			return false
		}
	}
	return true
}

// mayRead reports whether t may have a method Read, as an io.Reader does
// (the generator refuses stale on one): true when the fuzzer is not sure.
func mayRead(t typ, depth int) bool {
	if depth > 8 {
		return true
	}
	switch t := t.(type) {
	case ptrT:
		return mayRead(t.elem, depth+1)
	case litT:
		return true // *strings.Reader implements it
	case structT:
		return slices.ContainsFunc(t.fields, func(f field) bool { return f.embedded && mayRead(f.t, depth+1) })
	case namedT:
		switch {
		case t.d == stdStrReader:
			return true
		case t.d.iface != nil:
			return ifaceMayRead(t.d.iface, depth+1)
		case t.d.under != nil:
			return mayRead(subst(t.d.under, bind(t.d.tparams, t.args)), depth+1)
		}
	case tparamT:
		return t.p.cons == nil || t.p.cons.reader
	}
	return false
}

// mayUseLater reports whether a result of type t may be used after its
// call through the call's ctx, as the generator judges it (model's
// readLater): a channel, a func, a value with a method Context, or a
// pointer, array or struct holding one. It errs on the side of true.
func mayUseLater(t typ, depth int) bool {
	if depth > 8 {
		return true
	}
	switch t := t.(type) {
	case chanT, funcT:
		return true
	case ptrT:
		return mayUseLater(t.elem, depth+1)
	case arrayT:
		return mayUseLater(t.elem, depth+1)
	case structT:
		return slices.ContainsFunc(t.fields, func(f field) bool { return mayUseLater(f.t, depth+1) })
	case namedT:
		switch {
		case t.d.iface != nil:
			return slices.ContainsFunc(t.d.iface.methods, func(m *method) bool { return m.name == "Context" }) ||
				slices.ContainsFunc(t.d.iface.embeds, func(e typ) bool { return mayUseLater(e, depth+1) })
		case t.d.under != nil:
			return mayUseLater(subst(t.d.under, bind(t.d.tparams, t.args)), depth+1)
		}
	}
	return false
}

func ifaceMayRead(in *iface, depth int) bool {
	if slices.ContainsFunc(in.methods, func(m *method) bool { return m.name == "Read" }) {
		return true
	}
	return slices.ContainsFunc(in.embeds, func(e typ) bool { return mayRead(e, depth) })
}

// get returns the value of key on l, and whether l gives it.
func (l *line) get(key string) (string, bool) {
	if l == nil {
		return "", false
	}
	for _, o := range l.opts {
		if o.key == key {
			return o.val, true
		}
	}
	return "", false
}

// set gives key the value val on l, in place of its own.
func (g *gen) set(l *line, key, val string) {
	for i, o := range l.opts {
		if o.key == key {
			l.opts[i].val = val
			return
		}
	}
	l.opts = slices.Insert(l.opts, g.jintn(len(l.opts)+1), opt{key: key, val: val})
}

// skip reports whether l is a //breaker:skip line.
func (l *line) skip() bool {
	_, ok := l.get("skip")
	return ok
}

// lineFor is the interface line of in that routes the method called name:
// the first whose methods matches it, else the one without methods.
func (in *iface) lineFor(name string) *line {
	var dflt *line
	for _, l := range in.lines {
		globs, ok := l.get("methods")
		if !ok {
			dflt = l
			continue
		}
		for _, p := range strings.Split(globs, ",") {
			if ok, _ := path.Match(p, name); ok {
				return l
			}
		}
	}
	return dflt
}

// routed reports whether a route guards m, a method of in's method set.
func (g *gen) routed(in *iface, m *method) bool {
	own := in.own(m.name)
	if !g.guardable(m) || own != nil && own.line.skip() {
		return false
	}
	return own != nil && own.line != nil || in.lineFor(m.name) != nil
}

// own is the method called name written in in's literal, or nil.
func (in *iface) own(name string) *method {
	for _, m := range in.methods {
		if m.name == name {
			return m
		}
	}
	return nil
}

// effective is the value of line key key on m's route, "" for none (a
// method line's - or 0 clears an inherited one).
func (g *gen) effective(in *iface, m *method, key string) string {
	if !g.routed(in, m) {
		return ""
	}
	v, ok := "", false
	if own := in.own(m.name); own != nil {
		v, ok = own.line.get(key)
	}
	if !ok {
		v, _ = in.lineFor(m.name).get(key)
	}
	if v == "-" || v == "0" {
		return ""
	}
	return v
}

// retries reports whether m's route makes more than one try or has a
// budget: its fuzz test's upstream must not fail.
func (g *gen) retries(in *iface, m *method) bool {
	a := g.effective(in, m, "attempts")
	return a != "" && a != "1" || g.effective(in, m, "budget") != ""
}

// judges reports whether m's route has a valid or failure func.
func (g *gen) judges(in *iface, m *method) bool {
	return g.effective(in, m, "valid") != "" || g.effective(in, m, "failure") != ""
}

// retryOpts are attempts, backoff and budget, one of them at least.
func (g *gen) retryOpts(l *line) {
	if g.jchance(0.7) {
		g.set(l, "attempts", strconv.Itoa(1+g.jintn(3)))
	}
	if g.jchance(0.4) {
		g.set(l, "backoff", jpick(g, []string{"1ms", "500us", "1ms..10ms", "2ms..1s"}))
	}
	if _, ok := l.get("attempts"); !ok || g.jchance(0.25) {
		g.set(l, "budget", strconv.Itoa(1+g.jintn(4)))
	}
}

// judge gives some of in's lines the keys of judged methods: retries,
// and failure, valid and stale where they fit every method they reach.
// ms is in's method set.
func (g *gen) judge(in *iface, ms []*method) {
	for _, l := range in.lines {
		if g.jchance(0.15) {
			g.retryOpts(l)
		}
	}
	for _, l := range in.lines {
		for _, key := range []string{"failure", "valid", "stale"} {
			if g.jchance(0.2) {
				g.lineJudge(in, l, key, ms)
			}
		}
	}
	for _, m := range in.methods {
		if !g.guardable(m) || m.line.skip() {
			continue
		}
		p := 0.15
		if !errLast(m) {
			p = 0.45
		}
		if !g.jchance(p) {
			if m.line != nil && g.jchance(0.15) {
				g.retryOpts(m.line)
			}
			continue
		}
		l := m.line
		if l == nil {
			l = &line{}
		}
		g.methodJudge(in, m, l)
		m.line = l
	}
}

// methodJudge gives the line l of m, one of in's own methods, some of
// failure, valid, stale and the retry keys.
func (g *gen) methodJudge(in *iface, m *method, l *line) {
	a := answer(m)
	exact := !slices.ContainsFunc(a, hasTParam)
	params := func() []typ {
		if exact && g.jchance(0.7) {
			return a
		}
		return anyParams(len(a))
	}
	pf := 0.4 // an error result: failure makes the method judged
	if !errLast(m) {
		pf = 0.25 // a carrier: judged already
	}
	row := g.isRow(m) // only its first Scan reads it: no func may judge it
	if len(a) > 0 && !row && g.jchance(pf) {
		g.set(l, "failure", g.judgeFuncFor(true, params(), in))
	}
	if !row && g.jchance(0.5) && (len(a) > 0 || g.jchance(0.2)) {
		g.set(l, "valid", g.judgeFuncFor(false, params(), in))
	}
	if g.staleable(m) && g.jchance(0.4) {
		g.set(l, "stale", jpick(g, []string{"1m", "30s", "24h"}))
		if g.jchance(0.2) {
			g.set(l, "stalesize", strconv.Itoa(1+g.jintn(100)))
		}
	}
	if g.jchance(0.3) {
		g.retryOpts(l)
	}
	switch {
	case len(l.opts) > 0:
	case row:
		g.retryOpts(l)
	default:
		g.set(l, "valid", g.judgeFuncFor(false, params(), in))
	}
}

// isRow reports whether m returns a *sql.Row, which only its first Scan
// reads: neither valid nor failure may judge it.
func (g *gen) isRow(m *method) bool {
	rs := m.ft.results
	return len(rs) > 0 && g.carrierOf(rs[len(rs)-1]) == stdRow
}

// anyParams are n parameters of type any: a func of them fits every
// method with n results besides the error.
func anyParams(n int) []typ {
	ps := make([]typ, n)
	for i := range ps {
		ps[i] = namedT{d: stdAny}
	}
	return ps
}

// lineJudge gives the interface line l of in the key key (failure, valid
// or stale) when it fits every method l routes, once the own methods that
// it does not fit clear it (failure=-, valid=-, stale=0) on their line.
func (g *gen) lineJudge(in *iface, l *line, key string, ms []*method) {
	var routed []*method
	for _, m := range ms {
		own := in.own(m.name)
		if in.lineFor(m.name) != l || !g.routed(in, m) {
			continue
		}
		if own != nil {
			if _, ok := own.line.get(key); ok {
				continue // its own value wins
			}
		}
		routed = append(routed, m)
	}
	if len(routed) == 0 {
		return
	}
	sample := jpick(g, routed)
	a := answer(sample)
	var params []typ
	anyMode := false
	if key != "stale" {
		if key == "failure" && len(a) == 0 {
			return
		}
		params = a
		if slices.ContainsFunc(a, hasTParam) || g.jchance(0.4) {
			params, anyMode = anyParams(len(a)), true
		}
	}
	fits := func(m *method) bool {
		switch key {
		case "stale":
			return g.staleable(m)
		case "failure":
			if len(answer(m)) == 0 {
				return false
			}
		}
		if g.isRow(m) {
			return false // valid and failure may not judge a *sql.Row
		}
		if len(answer(m)) != len(params) {
			return false
		}
		if anyMode {
			return true
		}
		return g.key(funcT{params: answer(m)}) == g.key(funcT{params: params})
	}
	var clear []*method
	for _, m := range routed {
		if fits(m) {
			continue
		}
		own := in.own(m.name)
		if own == nil {
			return // an embedded method: no line of its own to clear it on
		}
		clear = append(clear, own)
	}
	switch key {
	case "stale":
		g.set(l, key, jpick(g, []string{"1m", "2h"}))
	default:
		g.set(l, key, g.judgeFuncFor(key == "failure", params, in))
	}
	none := "-"
	if key == "stale" {
		none = "0"
	}
	for _, m := range clear {
		if m.line == nil {
			m.line = &line{}
		}
		g.set(m.line, key, none)
	}
}

// judged reports whether m's outcome is judged: its result carries the
// error, or its route has a failure func.
func (g *gen) judged(in *iface, m *method) bool {
	rs := m.ft.results
	return g.routed(in, m) && (g.carrierOf(rs[len(rs)-1]) != nil || g.effective(in, m, "failure") != "")
}
