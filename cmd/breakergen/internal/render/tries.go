package render

import (
	"fmt"
	"go/types"
	"slices"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/model"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/textwrap"
)

// tries is one guarded method whose tries go through a helper: a wrapper's
// method whose route retries, judges or keeps its results, or a chain's
// method.
type tries struct {
	in                         *model.Interface
	m                          *model.Method
	r                          *model.Route
	a                          *alloc
	recv, impl, err, call, ctx string
	key                        string   // the local holding the key's route, "" if not keyed
	names                      []string // the method's parameters
	params, args               []jen.Code
	chain                      bool
	iface                      jen.Code // the interface type, X or X[K, V]
	rnames                     []string // the method's results, err last
	valid, retry               string   // locals; valid "" without a valid func
	keyExpr, val               jen.Code // of the stale cache, if any
	valFields                  []string // of an anonymous value struct
	implName                   string   // the helper's impl parameter, in a chain
	// judged says the method's outcome is judged (model.Method.Judged):
	// its answer is every result in rnames (a carrier, or the error
	// result too), its helper returns the outcome in a local of its own,
	// outcome, and race leaves the end (no source answered) to the caller.
	judged  bool
	outcome string
	// unread says the race's outcome is not read after it (a judged
	// method without a cache): it goes to _.
	unread bool
	// marks are the locals holding where each of the method's reader
	// arguments was before the first try (breakerimpl.Mark), one per
	// model.Method.Readers; nil when no try after the first reads them.
	marks []string
}

// answers is how many of t.rnames make a source's answer in a race: the
// results but the error, or every one of a judged method's.
func (t *tries) answers() int {
	if t.judged {
		return len(t.rnames)
	}
	return len(t.rnames) - 1
}

// outcomeName is the local holding how a try ended: the error result, or a
// judged method's outcome.
func (t *tries) outcomeName() string {
	if t.judged {
		return t.outcome
	}
	return t.err
}

// staleTypes returns the key and value types of m's stale cache: the
// arguments (the ctx aside, of whichever type: Method.CtxFirst) and the
// results it keeps (see kept), each as itself when there is one and as an
// anonymous struct otherwise, with the field names of that struct (nil
// for a single one). They depend on the signature only.
func (g *gen) staleTypes(m *model.Method) (k, v jen.Code, kf, vf []string) {
	sig := m.Sig
	var ktypes, vtypes []jen.Code
	a := newAlloc(nil)
	for i := range sig.Params().Len() {
		if i == 0 && m.CtxFirst() {
			continue
		}
		p := sig.Params().At(i)
		name := p.Name()
		if name == "" || name == "_" {
			name = "arg" + strconv.Itoa(i)
		}
		kf = append(kf, a.fresh(name))
		ktypes = append(ktypes, g.tr.typ(p.Type()))
	}
	for i := range kept(m) {
		vf = append(vf, "r"+strconv.Itoa(i))
		vtypes = append(vtypes, g.tr.typ(sig.Results().At(i).Type()))
	}
	k, kf = packedType(kf, ktypes)
	v, vf = packedType(vf, vtypes)
	return k, v, kf, vf
}

// kept is how many of m's results its stale cache keeps: those besides
// the error, and a carrier of its error (the answer, as returned).
func kept(m *model.Method) int {
	if m.Carrier != nil {
		return m.Sig.Results().Len()
	}
	return m.Sig.Results().Len() - 1
}

func packedType(names []string, types []jen.Code) (jen.Code, []string) {
	if len(names) == 1 {
		return types[0], nil
	}
	var fields []jen.Code
	for i, n := range names {
		fields = append(fields, jen.Id(n).Add(types[i]))
	}
	return jen.Struct(fields...), names
}

// stale prepares the stale cache's key and value expressions.
func (g *gen) stale(t *tries) {
	var keys, vals []jen.Code
	for i, n := range t.names {
		if i == 0 && t.m.CtxFirst() {
			continue
		}
		keys = append(keys, jen.Id(n))
	}
	for _, n := range t.rnames[:kept(t.m)] {
		vals = append(vals, jen.Id(n))
	}
	kt, vt, _, vf := g.staleTypes(t.m)
	t.valFields = vf
	if len(keys) == 1 {
		t.keyExpr = keys[0]
	} else {
		t.keyExpr = jen.Add(kt).Values(keys...)
	}
	if vf == nil {
		t.val = vals[0]
	} else {
		t.val = jen.Add(vt).Values(vals...)
	}
}

// unpack returns the results read from a stale value v.
func (t *tries) unpack(v string) []jen.Code {
	if t.valFields == nil {
		return []jen.Code{jen.Id(v)}
	}
	var out []jen.Code
	for _, f := range t.valFields {
		out = append(out, jen.Id(v).Dot(f))
	}
	return out
}

// tries renders the method, whose body so far is body, and its helper.
func (g *gen) tries(f *jen.File, t *tries, decl, recvType *jen.Statement, body []jen.Code) {
	m, r, a := t.m, t.r, t.a
	res := m.Sig.Results()
	t.rnames = make([]string, res.Len())
	for i := range res.Len() - 1 {
		t.rnames[i] = a.fresh("r" + strconv.Itoa(i))
	}
	t.rnames[res.Len()-1] = t.err
	if r.Valid != nil {
		t.valid = a.fresh("valid")
	}
	t.retry = a.fresh("retry")
	impl := ""
	if t.chain {
		impl = a.fresh("impl")
		t.implName = impl
	}
	hedged := t.chain && m.Hedged
	stale := m.StaleField != ""
	if stale {
		g.stale(t)
		if len(t.names) > 2 || len(t.names) == 2 && !m.CtxFirst() {
			// A struct of the arguments: spelled once.
			key := a.fresh("key")
			body = append(body, jen.Id(key).Op(":=").Add(t.keyExpr))
			t.keyExpr = jen.Id(key)
		}
	}
	// Leaving the loop: the wrapper without a cache returns what the last
	// try gave; the others go on.
	leave := jen.Return()
	if t.chain || stale {
		leave = jen.Break()
	}
	var lhs []jen.Code
	for _, n := range t.rnames[:res.Len()-1] {
		lhs = append(lhs, jen.Id(n))
	}
	if r.Valid != nil {
		if t.chain || stale {
			lhs = append(lhs, jen.Id(t.valid))
		} else {
			lhs = append(lhs, jen.Id("_"))
		}
	}
	lhs = append(lhs, jen.Id(t.err))
	// The helper takes ctx first, then the call, then the rest.
	rest := t.args
	if m.Ctx {
		rest = t.args[1:]
	}
	tryCall := func(call string, implExpr jen.Code) *jen.Statement {
		as := []jen.Code{jen.Id(t.ctx), jen.Id(call)}
		if t.chain {
			as = append(as, implExpr)
		}
		as = append(as, rest...)
		return jen.List(lhs...).Op("=").Id(t.recv).Dot(m.Try).Call(as...)
	}
	route := func() *jen.Statement { return routeOf(t.recv, r, t.key) }
	// One name serves every ok of the method: each lives in its own block.
	// So does unsent, the error of a request that cannot be sent again.
	ok := a.fresh("ok")
	var marks []jen.Code
	if !hedged && (t.chain || r.Retries()) {
		t.marks, marks = markReaders(a, m, t.names)
	}
	unsent := ""
	if m.Request > 0 || len(t.marks) > 0 {
		unsent = a.fresh("unsent")
	}
	run := ""
	if t.chain {
		// The chain is started in place (a Chain returned by value is
		// copied through memory on every call), and Done is deferred only
		// when Start claimed a provenance record to give back.
		run = a.fresh("run")
		body = append(body,
			jen.Var().Id(run).Add(g.impl("Chain")),
			jen.If(jen.Id(run).Dot("Start").Call(jen.Id(t.ctx), route())).Block(
				jen.Defer().Id(run).Dot("Done").Call(),
			),
		)
	}
	if r.Valid != nil && (t.chain || stale) && !hedged {
		body = append(body, jen.Var().Id(t.valid).Bool())
	}
	var refused []jen.Code // a wrapper's client closes the body no try sent
	if cb := closeBody(m, t.names); cb != nil && !t.chain {
		refused = append(refused, jen.If(jen.Id(t.retry).Dot("Tries").Call().Op("==").Lit(0)).Block(cb...))
	}
	enter := func() *jen.Statement {
		return jen.If(
			jen.List(jen.Id(t.call), jen.Id(t.err)).Op("=").Id(t.retry).Dot("Enter").Call(jen.Id(t.ctx), jen.Id(t.err)),
			jen.Id(t.err).Op("!=").Nil(),
		).Block(append(refused, leave)...)
	}
	var admit []jen.Code
	if r.Settings.Rate.Per > 0 {
		// Every try waits for a token: EnterFast would always decline.
		admit = []jen.Code{jen.Var().Id(t.call).Add(g.impl("Call")), enter()}
	} else {
		// EnterFast inlines, as in a plain wrapper: a plain CLOSED try
		// costs one load and one test here.
		admit = []jen.Code{
			jen.List(jen.Id(t.call), jen.Id(ok)).Op(":=").Id(t.retry).Dot("EnterFast").Call(),
			jen.If(jen.Op("!").Id(ok)).Block(enter()),
		}
	}
	// A chain's primary on a route of one try (attempts 1, no budget of
	// its own) makes it with no Retry and no loop: carrying the Retry cost
	// a chain whose primary answers 8% of its call (bench/contend's
	// Success/breakergen-chain).
	once := t.chain && !hedged && !r.Retries()
	tries := jen.Id(t.retry).Dot("Tries").Call()
	body = append(body, marks...)
	switch {
	case once:
		n := a.fresh("tries")
		tries = jen.Id(n)
		enterOnce := jen.List(jen.Id(t.call), jen.Id(n), jen.Id(t.err))
		if r.Settings.Rate.Per > 0 {
			// Every try waits for a token: EnterFast would always decline.
			body = append(body, enterOnce.Op(":=").Add(route()).Dot("EnterOnce").Call(jen.Id(t.ctx)))
		} else {
			body = append(body,
				jen.Id(n).Op(":=").Lit(1),
				jen.List(jen.Id(t.call), jen.Id(ok)).Op(":=").Add(route()).Dot("EnterFast").Call(),
				jen.If(jen.Op("!").Id(ok)).Block(enterOnce.Op("=").Add(route()).Dot("EnterOnce").Call(jen.Id(t.ctx))),
			)
		}
		body = append(body, jen.If(jen.Id(t.err).Op("==").Nil()).Block(tryCall(t.call, jen.Id(t.recv).Dot(t.impl))))
	case !hedged:
		loop := admit
		if replaced := released(m, t.rnames, "the answer this try replaces: no caller sees it"); len(replaced) > 0 {
			// A try that failed with an answer beside its error (a
			// response, a reader): the next try replaces it.
			loop = append(loop, jen.If(jen.Id(t.retry).Dot("Tries").Call().Op(">").Lit(1)).Block(replaced...))
		}
		loop = append(loop,
			tryCall(t.call, jen.Id(t.recv).Dot(t.impl)),
			jen.If(jen.Op("!").Id(t.retry).Dot("Again").Call(jen.Id(t.ctx), jen.Id(t.err))).Block(leave),
		)
		if unsent != "" {
			loop = append(loop, rewind(m, t.names, t.marks, unsent, leave.Clone().Comment("its body cannot be sent again: the last answer stands"))...)
		}
		body = append(body,
			jen.Id(t.retry).Op(":=").Add(route()).Dot("Retry").Call(),
			jen.For().Block(loop...),
		)
	}
	// outcome records a source's answer: PrimaryValid and AnsweredValid
	// on a route with a valid func, Primary and Answered without.
	outcome := func(method string, args ...jen.Code) *jen.Statement {
		args = append(args, jen.Id(t.err))
		if r.Valid != nil {
			method += "Valid"
			args = append(args, jen.Id(t.valid))
		}
		return jen.Id(run).Dot(method).Call(args...)
	}
	put := func() jen.Code {
		return jen.Id(t.recv).Dot(m.StaleField).Dot("Put").Call(t.keyExpr, t.val)
	}
	v, age := "", ""
	if stale {
		v, age = a.fresh("v"), a.fresh("age")
	}
	getStale := func(found ...jen.Code) jen.Code {
		ret := append(t.unpack(v), jen.Nil())
		ageName := "_"
		if len(found) > 0 {
			ageName = age
		}
		return jen.If(
			jen.List(jen.Id(v), jen.Id(ageName), jen.Id(ok)).Op(":=").Id(t.recv).Dot(m.StaleField).Dot("Get").Call(t.keyExpr),
			jen.Id(ok),
		).Block(append(found, jen.Return(ret...))...)
	}
	switch {
	case hedged:
		var hit jen.Code // serving the stale cache
		if stale {
			hit = getStale(jen.Id(run).Dot("Stale").Call(jen.Id(age)))
		}
		body = append(body, g.race(t, recvType, run, put, hit)...)
	case t.chain:
		answered := func() []jen.Code {
			if !stale {
				return []jen.Code{jen.Return()}
			}
			return []jen.Code{jen.If(jen.Id(t.err).Op("==").Nil()).Block(put()), jen.Return()}
		}
		discard := passedOver(m, t.rnames)
		i, fb, call := a.fresh("i"), a.fresh("fb"), a.fresh("call")
		fbRoute := jen.Id(t.recv).Dot(r.FallbackField).Index(jen.Id(i))
		body = append(body, jen.If(outcome("Primary", route(), tries)).Block(answered()...))
		body = append(body, discard...)
		before, fbBody, asked, end := resend(t.a, m, t.names, t.marks, unsent, run, fbRoute, tries)
		body = append(body, before...)
		fbBody = append(fbBody,
			jen.List(jen.Id(call), jen.Id(ok)).Op(":=").Id(run).Dot("Fallback").Call(fbRoute),
			jen.If(jen.Op("!").Id(ok)).Block(jen.Continue()),
		)
		fbBody = append(fbBody, asked...)
		fbBody = append(fbBody,
			tryCall(call, jen.Id(fb).Dot("Impl")),
			jen.If(outcome("Answered", fbRoute.Clone())).Block(answered()...),
		)
		fbBody = append(fbBody, discard...)
		body = append(body, jen.For(jen.List(jen.Id(i), jen.Id(fb)).Op(":=").Range().Id(t.recv).Dot(t.in.FallbacksField)).Block(fbBody...))
		if stale {
			body = append(body, getStale(jen.Id(run).Dot("Stale").Call(jen.Id(age))))
		}
		body = append(body, end...)
		var ret []jen.Code
		for i := range res.Len() - 1 {
			zero := a.fresh("zero")
			body = append(body, jen.Var().Id(zero).Add(g.tr.typ(res.At(i).Type())))
			ret = append(ret, jen.Id(zero))
		}
		body = append(body, jen.Return(append(ret, jen.Id(run).Dot("Err").Call())...))
	case stale:
		answer := jen.Id(t.err).Op("==").Nil()
		if r.Valid != nil {
			answer = answer.Op("&&").Id(t.valid)
		}
		body = append(body, jen.If(answer).Block(put(), jen.Return()))
		if len(r.Exclude) > 0 {
			body = append(body, jen.If(route().Dot("Excluded").Call(jen.Id(t.err))).Block(jen.Return()))
		}
		// A plain wrapper's stale answer goes in the ctx's provenance
		// record (a method without a ctx, its own or a parameter's, has
		// none).
		var found []jen.Code
		if m.Ctx || m.CtxFrom > 0 {
			found = append(found, g.impl("ServedStale").Call(jen.Id(t.ctx), jen.Id(age)))
		}
		body = append(body, getStale(found...), jen.Return())
	}
	if t.chain {
		then := ""
		if stale {
			then = ", then the stale cache"
		}
		hedge := ""
		if hedged {
			extra := "the next one is asked too"
			if r.Hedges > 1 {
				extra = fmt.Sprintf("the next one is asked too, up to %d extra sources at once", r.Hedges)
			}
			hedge = fmt.Sprintf("; when the source asked last has not answered within %s, %s, and the first valid answer wins", r.Hedge, extra)
		}
		comment(f, fmt.Sprintf("%s asks %s.%s through %s%s, then each fallback%s%s%s.", m.Name, t.impl, m.Name, breakerDoc(m, t.names), routeExtras(r, m), then, hedge, answersDoc(m)))
	} else {
		comment(f, fmt.Sprintf("%s calls %s.%s through %s%s%s.", m.Name, t.impl, m.Name, breakerDoc(m, t.names), ctxFromDoc(m, t.names), answersDoc(m)))
	}
	f.Add(decl.Add(g.tr.results(res, t.rnames)).Block(body...))

	// The helper: one try.
	var tparams []jen.Code
	restParams := t.params
	if m.Ctx {
		tparams = append(tparams, t.params[0])
		restParams = t.params[1:]
	} else {
		tparams = append(tparams, jen.Id(t.ctx).Qual("context", "Context"))
	}
	tparams = append(tparams, jen.Id(t.call).Add(g.impl("Call")))
	target := jen.Id(t.recv).Dot(t.impl)
	if t.chain {
		tparams = append(tparams, jen.Id(impl).Add(t.iface))
		target = jen.Id(impl)
	}
	tparams = append(tparams, restParams...)
	upstream := target.Dot(m.Name).Call(t.args...)
	var tbody []jen.Code
	var results jen.Code
	if r.Valid != nil {
		var rs []jen.Code
		var vargs []jen.Code
		for i, n := range t.rnames[:res.Len()-1] {
			rs = append(rs, jen.Id(n).Add(g.tr.typ(res.At(i).Type())))
			vargs = append(vargs, jen.Id(n))
		}
		rs = append(rs, jen.Id(t.valid).Bool(), jen.Id(t.err).Error())
		results = jen.Params(rs...)
		tbody = append(tbody,
			jen.Id(t.valid).Op("=").True(),
			jen.Defer().Id(t.call).Dot("ExitValid").Call(jen.Id(t.ctx), jen.Op("&").Id(t.err), jen.Op("&").Id(t.valid)),
		)
		tbody = append(tbody, g.panicGuard(t.err)) // before the timeout: a nil ctx panics in it
		tbody = append(tbody, g.timeout(t)...)
		tbody = append(tbody,
			jen.List(append(vargs, jen.Id(t.err))...).Op("=").Add(upstream),
			g.judgeValid(t.err, t.valid, r, vargs...),
			jen.Return(),
		)
	} else {
		tnames := make([]string, res.Len())
		for i := range tnames {
			tnames[i] = "_"
		}
		tnames[res.Len()-1] = t.err
		if m.Response > 0 && m.UseTimeout {
			tnames[m.Response-1] = t.rnames[m.Response-1] // it holds the timeout
		}
		results = g.tr.results(res, tnames)
		tbody = append(tbody, g.deferDone(m, t.call, t.ctx, t.err, "")) // one deferred call, as a plain method's
		tbody = append(tbody, g.panicGuard(t.err))                      // before the timeout: a nil ctx panics in it
		tbody = append(tbody, g.timeout(t)...)
		tbody = append(tbody, jen.Return(upstream))
	}
	f.Line()
	if t.chain {
		comment(f, fmt.Sprintf("%s makes one try of %s on %s through its route.", m.Try, m.Name, impl))
	} else {
		comment(f, fmt.Sprintf("%s makes one try of %s through its route.", m.Try, m.Name))
	}
	f.Func().Params(jen.Id(t.recv).Op("*").Add(recvType)).Id(m.Try).Params(tparams...).Add(results).Block(tbody...)
}

// timeout adds the route's per-try timeout to ctx, if it has one.
func (g *gen) timeout(t *tries) []jen.Code {
	if !t.m.UseTimeout {
		return nil
	}
	var resp string
	if t.m.Response > 0 {
		resp = t.rnames[t.m.Response-1]
	}
	return g.withTimeout(t.m, t.a, t.recv, t.r, t.ctx, t.names, resp)
}

// ref renders a package-level name.
func (g *gen) ref(r *model.Ref) *jen.Statement {
	if r.Path == g.local.Path() {
		return jen.Id(r.Name)
	}
	return jen.Qual(r.Path, r.Name)
}

// judgeValid renders the judging of a try's answer by r's valid func, in
// a try whose deferred ExitValid reads errName and validName (which is
// true until then): only an answer with no error is judged, with the
// panic guard back in errName while the func runs, so that a valid func
// that panics (on a typed nil answer, say) counts as the try's panic, a
// failure, and is re-raised, as a panic of the method is; without it the
// panic left a success counted and the chain's next source unasked.
func (g *gen) judgeValid(errName, validName string, r *model.Route, args ...jen.Code) jen.Code {
	return jen.If(jen.Id(errName).Op("==").Nil()).Block(
		jen.Id(errName).Op("=").Add(g.impl("PanicGuard")).Comment("stays only if the valid func panics"),
		jen.Id(validName).Op("=").Add(g.validCall(r, args...)),
		jen.Id(errName).Op("=").Nil(),
	)
}

// validCall renders the call of r's valid func on args, converted to bool
// when the func returns a named bool type (type Ok bool), which a bool
// variable does not take.
func (g *gen) validCall(r *model.Route, args ...jen.Code) *jen.Statement {
	call := g.ref(r.Valid).Call(args...)
	if r.ValidNamed {
		return jen.Bool().Parens(call)
	}
	return call
}

// race renders the body of a hedged chain method after the chain's start:
// a struct type of the receiver (of type recvType) and the arguments, a
// func literal making one try of the method on a source with them, the
// race of the sources (breakerimpl.RaceArgs, which keeps a copy of the
// arguments: a closure capturing them would be allocated on every call),
// then the stale cache and the chain's error. put stores an answer in the
// stale cache; hit, nil without a cache, serves the cache.
func (g *gen) race(t *tries, recvType jen.Code, run string, put func() jen.Code, hit jen.Code) []jen.Code {
	m, r, a := t.m, t.r, t.a
	res := m.Sig.Results()
	n := t.answers()
	outcome := t.outcomeName()
	// The closure answers the method's results besides the error (every
	// one of a judged method's) as one value: itself, struct{} when there
	// is none, or a struct of them.
	val := jen.Code(jen.Struct())
	if n > 0 {
		var names []string
		var types []jen.Code
		for i := range n {
			names = append(names, "r"+strconv.Itoa(i))
			types = append(types, g.tr.typ(res.At(i).Type()))
		}
		val, _ = packedType(names, types)
	}
	ask, argsType, argsName := a.fresh("ask"), a.fresh("raceArgs"), a.fresh("args")
	results := []jen.Code{val}
	race := "RaceArgs"
	if r.Valid != nil {
		results = append(results, jen.Bool())
		race = "RaceArgsValid"
	}
	results = append(results, jen.Error())
	// The race's hooks (breakerimpl.RaceHooks): Drop for answers that
	// hold something open, Keep for a response read through its source's
	// ctx (Answered for an answer read in full, Held for one released by
	// its reader), Unsent for a request whose one body may be taken.
	hooks := jen.Dict{}
	if drop := g.drop(t, val, n); drop != nil {
		hooks[jen.Id("Drop")] = drop
	}
	if m.Response == 0 && answered(m) {
		// The answer is data read in full (a request's included, sent
		// and answered within the call): nothing reads through the
		// winner's ctx after it, which would otherwise stay registered
		// with the caller's until that ends. A stream (a response's body
		// returned as an io.ReadCloser) is read through it later.
		hooks[jen.Id("Answered")] = jen.True()
	} else if keep := g.keep(t, val, n); keep != nil {
		hooks[jen.Id("Keep")] = keep
	} else if releasedByReader(m) {
		// Read through the winner's ctx until the caller releases it (a
		// *sql.Row until Scan, *sql.Rows until Close, a stream until
		// closed), and not to be wrapped: the winner's ctx lets go of
		// the caller's once what was derived from it for the answer
		// ended, rather than staying registered with it until it ends.
		hooks[jen.Id("Held")] = jen.True()
	}
	// The arguments' struct: the receiver, then the method's arguments
	// but ctx, each in a field of its own name.
	params := m.Sig.Params()
	fields := []jen.Code{jen.Id(t.recv).Op("*").Add(recvType)}
	argVals := []jen.Code{jen.Id(t.recv)}
	args := []jen.Code{jen.Id(t.ctx), jen.Id(t.call), jen.Id(t.implName)}
	// A *http.Request is sent by each source as its own (httpguard.Take):
	// a body of its own, or the one body to the first source, and the
	// source's ctx when the request carries the method's.
	var take, share []jen.Code
	req, shared := "", ""
	if m.Request > 0 {
		req, shared = a.fresh("sent"), a.fresh("shared")
	}
	first := 1 // the first argument after ctx
	if !m.Ctx {
		first = 0
	}
	for i, name := range t.names[first:] {
		fields = append(fields, jen.Id(name).Add(g.tr.typ(params.At(i+first).Type())))
		argVals = append(argVals, jen.Id(name))
		arg := jen.Id(argsName).Dot(name)
		if m.Request > 0 && i+first == m.Request-1 {
			arg = jen.Id(req)
		}
		if m.Sig.Variadic() && i+first+1 == len(t.names) {
			arg = arg.Op("...")
		}
		args = append(args, arg)
	}
	try := jen.Id(argsName).Dot(t.recv).Dot(m.Try).Call(args...)
	var askBody []jen.Code
	if n == 1 {
		askBody = []jen.Code{jen.Return(try)}
	} else {
		var lhs, vals []jen.Code
		for _, name := range t.rnames[:n] {
			lhs = append(lhs, jen.Id(name))
			vals = append(vals, jen.Id(name))
		}
		ret := []jen.Code{jen.Add(val).Values(vals...)}
		if r.Valid != nil {
			lhs = append(lhs, jen.Id(t.valid))
			ret = append(ret, jen.Id(t.valid))
		}
		lhs = append(lhs, jen.Id(outcome))
		ret = append(ret, jen.Id(outcome))
		if n == 0 && r.Valid == nil {
			askBody = []jen.Code{jen.Return(jen.Add(val).Values(), try)}
		} else {
			askBody = []jen.Code{jen.List(lhs...).Op(":=").Add(try), jen.Return(ret...)}
		}
	}
	if m.Request > 0 {
		reqName := t.names[m.Request-1]
		fields = append(fields, jen.Id(shared).Op("*").Qual(HTTPGuardPath, "Shared"))
		argVals = append(argVals, jen.Id(shared))
		share = []jen.Code{
			jen.Id(shared).Op(":=").Qual(HTTPGuardPath, "Share").Call(jen.Id(reqName)).Comment("how the sources share the request's body"),
			jen.Defer().Qual(HTTPGuardPath, "Unshare").Call(jen.Id(reqName), jen.Id(shared)).Comment("a body no source took is the call's to close"),
		}
		hooks[jen.Id("Unsent")] = jen.Func().Params(jen.Id(argsName).Id(argsType)).Error().Block(
			jen.Return(jen.Qual(HTTPGuardPath, "Unsent").Call(jen.Id(argsName).Dot(reqName), jen.Id(argsName).Dot(shared))),
		)
		unsent, zero := a.fresh("unsent"), a.fresh("zero")
		ret := []jen.Code{jen.Id(zero)}
		if r.Valid != nil {
			ret = append(ret, jen.False())
		}
		ret = append(ret, jen.Id(t.call).Dot("Unsent").Call(jen.Id(t.ctx), jen.Id(unsent)))
		take = []jen.Code{
			jen.List(jen.Id(req), jen.Id(unsent)).Op(":=").Qual(HTTPGuardPath, "Take").Call(jen.Id(argsName).Dot(reqName), jen.Id(argsName).Dot(shared)),
			jen.If(jen.Id(unsent).Op("!=").Nil()).Block(
				jen.Comment("another source sent the one body: this one sends nothing"),
				jen.Var().Id(zero).Add(val),
				jen.Return(ret...),
			),
		}
		withCtx := jen.Id(req).Op("=").Id(req).Dot("WithContext").Call(jen.Id(t.ctx)).Comment("the source's ctx, cancelled when it loses")
		if m.Ctx {
			// The source's ctx goes with the request as well as in the
			// ctx argument when the request was made on the call's ctx:
			// a Do(ctx, req) that sends req as it is (client.Do(req))
			// would otherwise send the loser on the caller's ctx, and the
			// race would wait for it. A request on a ctx of its own keeps
			// it, with its deadline and values.
			onCtx := a.fresh("onCtx")
			fields = append(fields, jen.Id(onCtx).Bool())
			argVals = append(argVals, jen.Qual(HTTPGuardPath, "OnContext").Call(jen.Id(reqName), jen.Id(t.names[0])))
			take = append(take, jen.If(jen.Id(argsName).Dot(onCtx)).Block(withCtx))
		} else {
			take = append(take, withCtx)
		}
		askBody = append(take, askBody...)
	}
	var body []jen.Code
	for _, l := range textwrap.Lines(fmt.Sprintf("%s holds the arguments a try of %s needs; %s keeps a copy of them, so that no closure capturing them is allocated.", argsType, m.Name, race), 70) {
		body = append(body, jen.Comment(l))
	}
	body = append(body, jen.Type().Id(argsType).Struct(fields...))
	for _, l := range textwrap.Lines(fmt.Sprintf("%s makes one try of %s on a source; %s asks the sources.", ask, m.Name, race), 70) {
		body = append(body, jen.Comment(l))
	}
	body = append(body,
		jen.Id(ask).Op(":=").Func().Params(
			jen.Id(t.ctx).Qual("context", "Context"),
			jen.Id(t.call).Add(g.impl("Call")),
			jen.Id(t.implName).Add(t.iface),
			jen.Id(argsName).Id(argsType),
		).Parens(jen.List(results...)).Block(askBody...),
	)
	// RaceArgs asks every source in a goroutine of its own and returns the
	// first valid answer; Won says whether one came.
	raceCall := g.impl(race).Call(jen.Op("&").Id(run), jen.Id(t.recv).Dot(t.in.PrimaryField),
		jen.Id(t.recv).Dot(t.in.FallbacksField), jen.Id(t.recv).Dot(r.FallbackField),
		jen.Id(argsType).Values(argVals...), jen.Id(ask))
	if len(hooks) > 0 {
		raceCall = g.impl(race+"With").Call(jen.Op("&").Id(run), jen.Id(t.recv).Dot(t.in.PrimaryField),
			jen.Id(t.recv).Dot(t.in.FallbacksField), jen.Id(t.recv).Dot(r.FallbackField),
			jen.Id(argsType).Values(argVals...), jen.Id(ask), g.impl("RaceHooks").Types(val, jen.Id(argsType)).Values(hooks))
	}
	body = append(body, share...)
	raced := outcome // the race's outcome, where it goes
	if t.unread {
		raced = "_"
	}
	switch n {
	case 0:
		body = append(body, jen.List(jen.Id("_"), jen.Id(raced)).Op("=").Add(raceCall))
	case 1:
		body = append(body, jen.List(jen.Id(t.rnames[0]), jen.Id(raced)).Op("=").Add(raceCall))
	default:
		v := a.fresh("answer")
		var lhs, rhs []jen.Code
		for i, name := range t.rnames[:n] {
			lhs = append(lhs, jen.Id(name))
			rhs = append(rhs, jen.Id(v).Dot("r"+strconv.Itoa(i)))
		}
		// A judged method's outcome is declared already; the error result
		// is not an outcome then, but one of the answer's results.
		op := ":="
		if t.judged {
			op = "="
			body = append(body, jen.Var().Id(v).Add(val))
		}
		body = append(body,
			jen.List(jen.Id(v), jen.Id(raced)).Op(op).Add(raceCall),
			jen.List(lhs...).Op("=").List(rhs...),
		)
	}
	won := []jen.Code{jen.Return()}
	if hit != nil {
		won = []jen.Code{jen.If(jen.Id(outcome).Op("==").Nil()).Block(put()), jen.Return()}
	}
	body = append(body, jen.If(jen.Id(run).Dot("Won").Call()).Block(won...))
	if hit != nil {
		body = append(body, hit)
	}
	if t.judged {
		return body // the caller returns the chain's error its own way
	}
	var ret []jen.Code
	for i := range n {
		zero := a.fresh("zero")
		body = append(body, jen.Var().Id(zero).Add(g.tr.typ(res.At(i).Type())))
		ret = append(ret, jen.Id(zero))
	}
	return append(body, jen.Return(append(ret, jen.Id(run).Dot("Err").Call())...))
}

// rewind renders the resend of m's requests (every *http.Request
// parameter, in the locals names) and readers (the marks, see
// markReaders) before another try or source, which an earlier one may
// have read: each request becomes a copy with its body read again
// (httpguard.Rewind), each reader is sought back (breakerimpl.Reader's
// Rewind), and when one cannot be, unsent (a local of the block) holds
// why and the block runs then.
func rewind(m *model.Method, names, marks []string, unsent string, then ...jen.Code) []jen.Code {
	var code []jen.Code
	reqs := m.Requests()
	if len(reqs) > 0 {
		code = append(code, jen.Var().Id(unsent).Error())
	}
	n := 0
	block := func() []jen.Code {
		if n++; n > 1 {
			return cloneAll(then) // rendered once more
		}
		return then
	}
	for _, i := range reqs {
		code = append(code, jen.If(
			jen.List(jen.Id(names[i]), jen.Id(unsent)).Op("=").Qual(HTTPGuardPath, "Rewind").Call(jen.Id(names[i])),
			jen.Id(unsent).Op("!=").Nil(),
		).Block(block()...))
	}
	op := ":=" // a local of each if, without a request's
	if len(reqs) > 0 {
		op = "="
	}
	for _, mark := range marks {
		code = append(code, jen.If(
			jen.Id(unsent).Op(op).Id(mark).Dot("Rewind").Call(),
			jen.Id(unsent).Op("!=").Nil(),
		).Block(block()...))
	}
	return code
}

// markReaders renders, for m's reader arguments (model.Method.Readers, in
// the locals names), the locals noting where each is before the first
// try (breakerimpl.Mark), so that a later try or source reads it again
// from there (rewind), and returns their names.
func markReaders(a *alloc, m *model.Method, names []string) (marks []string, code []jen.Code) {
	for _, i := range m.Readers {
		mark := a.fresh("mark")
		marks = append(marks, mark)
		code = append(code, jen.Id(mark).Op(":=").Qual(ImplPath, "Mark").Call(jen.Id(names[i])).Comment("where "+names[i]+" is, for a later try to read it again from there"))
	}
	return marks, code
}

// cloneAll returns copies of code's statements, to render them twice.
func cloneAll(code []jen.Code) []jen.Code {
	out := make([]jen.Code, len(code))
	for i, c := range code {
		if st, ok := c.(*jen.Statement); ok {
			out[i] = st.Clone()
		} else {
			out[i] = c
		}
	}
	return out
}

// resend renders, for a chain's method taking a *http.Request or readers
// (marks, see markReaders), the local sent, saying whether the request was
// sent (by the primary's tries, then by a fallback's), declared before
// the fallbacks, and the start of each fallback's turn: once the request
// was sent, its body is rewound and its readers sought back, and a
// request or reader that cannot be sent again passes the fallback over
// as unsent.
// tries is the primary's count of tries (one that fault injection failed
// counts, though it sent nothing: a rehearsal may then pass over a
// fallback it could have asked). A fallback that is asked sets sent
// (asked). end, at the chain's end, closes the body of a client's request
// that no source sent (closeBody). Nothing for another method.
func resend(a *alloc, m *model.Method, names, marks []string, unsent, run string, fbRoute, tries jen.Code) (before, start, asked, end []jen.Code) {
	if m.Request == 0 && len(marks) == 0 {
		return nil, nil, nil, nil
	}
	sent := a.fresh("sent")
	if cb := closeBody(m, names); cb != nil {
		// No source answered, and none sent the request (or the body):
		// its body is the chain's to close.
		end = []jen.Code{jen.If(jen.Op("!").Id(sent)).Block(cb...)}
	}
	what := "the request's body"
	if m.Request == 0 {
		what = "the readers"
		if len(marks) == 1 {
			what = names[m.Readers[0]]
		}
	}
	before = []jen.Code{jen.Id(sent).Op(":=").Add(tries).Op(">").Lit(0).Comment("the primary's tries read " + what)}
	start = []jen.Code{jen.If(jen.Id(sent)).Block(
		rewind(m, names, marks, unsent,
			jen.Id(run).Dot("Unsent").Call(fbRoute, jen.Id(unsent)),
			jen.Continue(),
		)...,
	)}
	return before, start, []jen.Code{jen.Id(sent).Op("=").True()}, end
}

// held is a result of a method that holds something open until its
// reader is done with it: an *http.Response its connection until its body
// is closed, *sql.Rows theirs until closed, a *sql.Row its own until Scan.
// No caller sees the answer of a source that a chain passes over or that
// loses a race, so it is released.
type held struct {
	idx int // among the method's results
	// release renders the statement releasing the result in v, with the
	// comment why on its call when why is not "".
	release func(v jen.Code, why string) jen.Code
	// drop, if not nil, is the func with which a race releases one: for
	// a response, one that does not drain it (a race must not wait on a
	// slow body). Without it, a race releases it as release does.
	drop jen.Code
}

// heldResults lists m's results that hold something open (see held): an
// *http.Response, database/sql's handles (*sql.Rows, *sql.Conn, *sql.Stmt,
// *sql.Tx: model.Method.Handles), go-redis's connections (*redis.PubSub,
// *redis.Conn: model.Method.Conns), streams (an io.ReadCloser, an *os.File:
// model.Method.Streams), and a *sql.Row that carries the
// method's error. A *sql.Row that failed holds nothing, so only a race, which
// drops the answers of its losers, releases one.
func heldResults(m *model.Method) []held {
	var hs []held
	if m.Response > 0 {
		hs = append(hs, held{
			idx: m.Response - 1,
			release: func(v jen.Code, why string) jen.Code {
				return commented(jen.Qual(HTTPGuardPath, "Discard").Call(v), why)
			},
			drop: jen.Qual(HTTPGuardPath, "Drop"),
		})
	}
	for _, h := range m.Handles {
		hs = append(hs, held{
			idx: h.Index,
			release: func(v jen.Code, why string) jen.Code {
				return jen.If(jen.Add(v).Op("!=").Nil()).Block(commented(jen.Id("_").Op("=").Add(v).Dot(h.Release).Call(), why))
			},
		})
	}
	for _, i := range m.Conns {
		hs = append(hs, held{
			idx: i,
			release: func(v jen.Code, why string) jen.Code {
				// A go-redis connection (a *redis.PubSub subscribed, a
				// *redis.Conn) goes back to its pool, or is closed.
				return jen.If(jen.Add(v).Op("!=").Nil()).Block(commented(jen.Id("_").Op("=").Add(v).Dot("Close").Call(), why))
			},
		})
	}
	for _, i := range m.Streams {
		hs = append(hs, held{
			idx: i,
			release: func(v jen.Code, why string) jen.Code {
				// Through a func taking an io.Closer: a nil pointer in an
				// interface, beside an error, is no stream to close, and
				// a type parameter's value cannot be compared with nil.
				return commented(jen.Qual(ImplPath, "CloseStream").Call(v), why)
			},
		})
	}
	for _, fs := range m.FieldStreams {
		hs = append(hs, held{
			idx: fs.Index,
			release: func(v jen.Code, why string) jen.Code {
				closeField := commented(jen.Qual(ImplPath, "CloseStream").Call(jen.Add(v).Dot(fs.Field)), why)
				if fs.Ptr {
					return jen.If(jen.Add(v).Op("!=").Nil()).Block(closeField)
				}
				return closeField
			},
		})
	}
	if c := m.Carrier; c != nil && c.Refuse == model.CarrySQLRow {
		hs = append(hs, held{
			idx:     m.Sig.Results().Len() - 1,
			release: func(v jen.Code, why string) jen.Code { return commented(jen.Qual(SQLImplPath, "Drop").Call(v), why) },
			drop:    jen.Qual(SQLImplPath, "Drop"),
		})
	}
	return hs
}

// keep renders the func with which the race of t's method ties the end of
// the winning source's ctx to its answer (breakerimpl.RaceHooks.Keep), of
// type val (n results, packed as race packs them), or nil: a response's
// body is read through that ctx after the call returns, so the ctx ends
// when the body is closed (httpguard.CancelOnClose). (An answer that
// holds nothing read through that ctx has the hook Answered instead.)
func (g *gen) keep(t *tries, val jen.Code, n int) jen.Code {
	m := t.m
	v, done := "", ""
	literal := func(body ...jen.Code) jen.Code {
		return jen.Func().Params(jen.Id(v).Add(val), jen.Id(done).Qual("context", "CancelFunc")).Add(val).Block(
			append(body, jen.Return(jen.Id(v)))...)
	}
	switch {
	case m.Response == 0 || m.Response > n:
		return nil
	case n == 1:
		return jen.Qual(HTTPGuardPath, "CancelOnClose")
	}
	v, done = t.a.fresh("answer"), t.a.fresh("done")
	field := jen.Id(v).Dot("r" + strconv.Itoa(m.Response-1))
	return literal(jen.Add(field).Op("=").Qual(HTTPGuardPath, "CancelOnClose").Call(field.Clone(), jen.Id(done)))
}

// answered reports whether m's results are read in full when it returns,
// so that the ctx it was called with may end then: none is a database/sql
// handle or a *sql.Row, and each is a go-redis command that ran (a
// carrier) or plain data (inert). A result that may read through the ctx
// later (a stream, a reader, an iterator, anything behind an interface
// or a func) keeps the winner's ctx until the caller's ends.
func answered(m *model.Method) bool {
	if len(m.Handles) > 0 || len(m.Conns) > 0 || len(m.Streams) > 0 || len(m.FieldStreams) > 0 || m.Carrier != nil && m.Carrier.Refuse == model.CarrySQLRow {
		return false
	}
	res := m.Sig.Results()
	for i := range res.Len() {
		t := res.At(i).Type()
		if types.Identical(t, types.Universe.Lookup("error").Type()) || m.Carrier != nil && i == res.Len()-1 {
			continue
		}
		if !inert(t, map[types.Type]bool{}) {
			return false
		}
	}
	return true
}

// releasedByReader reports whether m's results, besides plain data (see
// inert) and the error, all hold something open that their reader
// releases (see heldResults), and at least one does: database/sql's
// handles and *sql.Row, go-redis's connections, streams. What such a
// result reads through the ctx it was made with, it reads through a ctx
// derived from it, which ends when the result is released (database/sql
// derives one for rows and transactions, net/http for a body, gRPC for a
// stream). A channel, a func or an interface that is no stream may be
// fed by a goroutine watching the ctx itself, until the caller's ctx
// ends: those keep the winner's ctx until then.
func releasedByReader(m *model.Method) bool {
	hs := heldResults(m)
	if len(hs) == 0 {
		return false
	}
	res := m.Sig.Results()
	for i := range res.Len() {
		t := res.At(i).Type()
		if types.Identical(t, types.Universe.Lookup("error").Type()) || m.Carrier != nil && i == res.Len()-1 && m.Carrier.Refuse != model.CarrySQLRow {
			continue
		}
		if !slices.ContainsFunc(hs, func(h held) bool { return h.idx == i }) && !inert(t, map[types.Type]bool{}) {
			return false
		}
	}
	return true
}

// inert reports whether a value of type t is plain data: basic values,
// and arrays, slices, maps, structs and pointers of them, with no
// channel, func, interface or unsafe.Pointer anywhere in it.
func inert(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Kind() != types.UnsafePointer
	case *types.Pointer:
		return inert(u.Elem(), seen)
	case *types.Slice:
		return inert(u.Elem(), seen)
	case *types.Array:
		return inert(u.Elem(), seen)
	case *types.Map:
		return inert(u.Key(), seen) && inert(u.Elem(), seen)
	case *types.Struct:
		for f := range u.Fields() {
			if !inert(f.Type(), seen) {
				return false
			}
		}
		return true
	}
	return false
}

// drop renders the func with which the race of t's method releases an
// answer it does not return, of type val (n results, packed as race
// packs them), or nil when none of them holds anything: the release func
// itself for a lone result, else a literal.
func (g *gen) drop(t *tries, val jen.Code, n int) jen.Code {
	var hs []held
	for _, h := range heldResults(t.m) {
		if h.idx < n {
			hs = append(hs, h)
		}
	}
	if len(hs) == 0 {
		return nil
	}
	if n == 1 && hs[0].drop != nil {
		return hs[0].drop
	}
	v := t.a.fresh("answer")
	var body []jen.Code
	for _, h := range hs {
		x := jen.Id(v)
		if n > 1 {
			x = jen.Id(v).Dot("r" + strconv.Itoa(h.idx))
		}
		if h.drop != nil {
			body = append(body, jen.Add(h.drop).Call(x))
		} else {
			body = append(body, h.release(x, ""))
		}
	}
	return jen.Func().Params(jen.Id(v).Add(val)).Block(body...)
}

// passedOver renders the release of the results, in the locals rnames,
// of a source a chain passes over (its answer failed or invalid, or came
// beside an error) that hold something open: no caller sees them.
// Nothing when no result holds anything.
func passedOver(m *model.Method, rnames []string) []jen.Code {
	return released(m, rnames, "a source passed over: no caller sees its answer")
}

// released renders the release of m's results in the locals rnames that
// hold something open, for an answer no caller will see (why, the
// comment). A *sql.Row that is not the call's answer failed, and holds
// nothing.
func released(m *model.Method, rnames []string, why string) []jen.Code {
	var out []jen.Code
	for _, h := range heldResults(m) {
		if m.Carrier != nil && m.Carrier.Refuse == model.CarrySQLRow && h.idx == m.Sig.Results().Len()-1 {
			continue
		}
		out = append(out, h.release(jen.Id(rnames[h.idx]), why))
	}
	return out
}

// commented adds the comment why to s, if why is not "".
func commented(s *jen.Statement, why string) *jen.Statement {
	if why == "" {
		return s
	}
	return s.Comment(why)
}
