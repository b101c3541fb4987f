package render

import (
	"fmt"
	"go/types"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/model"
)

// HTTPGuardPath is the import path of the helpers for net/http that
// generated code calls (a response's body holding a timeout).
const HTTPGuardPath = "github.com/breakergen/breakergen/runtime/httpguard"

// SQLImplPath is the import path of the helper making a *sql.Row of a
// refusal.
const SQLImplPath = "github.com/breakergen/breakergen/runtime/breakerimpl/sqlimpl"

// withTimeout renders the route's per-try timeout added to ctx. A ctx that
// came from a parameter (an *http.Request) goes on with it, through its
// WithContext; so does that of a method's context.Context first
// parameter, in its *http.Request when the request was made on it
// (onCtxRequest). resp, if not "", names a *http.Response result: its
// body holds the timeout's cancel until the caller closes it, since the
// body is read after the call returns; otherwise the cancel is deferred.
func (g *gen) withTimeout(m *model.Method, a *alloc, recv string, r *model.Route, ctx string, names []string, resp string) []jen.Code {
	cancel := a.fresh("cancel")
	timeout := jen.Id(recv).Dot(r.Field).Dot("Timeout").Call()
	if r.Family != nil {
		// The line's timeout, which every key's route has: a try's helper
		// does not hold the key's route.
		timeout = jen.Add(g.duration(r.Timeout))
	}
	var out []jen.Code
	req, onCtx := onCtxRequest(m, names), ""
	if req != "" {
		// Asked before ctx takes the timeout.
		onCtx = a.fresh("onCtx")
		out = append(out, jen.Id(onCtx).Op(":=").Qual(HTTPGuardPath, "OnContext").Call(jen.Id(req), jen.Id(ctx)).Comment(req+" made on "+ctx+" goes on with the timeout's"))
	}
	out = append(out, jen.List(jen.Id(ctx), jen.Id(cancel)).Op(":=").Add(g.impl("WithTimeout")).Call(jen.Id(ctx), timeout))
	if resp == "" {
		out = append(out, jen.Defer().Id(cancel).Call())
	} else {
		out = append(out,
			jen.Comment("The body is read after the call returns: closing it cancels."),
			jen.Defer().Func().Params().Block(
				jen.Id(resp).Op("=").Qual(HTTPGuardPath, "CancelOnClose").Call(jen.Id(resp), jen.Id(cancel)),
			).Call())
	}
	if m.CtxFrom > 0 {
		p := names[m.CtxFrom-1]
		out = append(out, jen.Id(p).Op("=").Id(p).Dot("WithContext").Call(jen.Id(ctx)))
	}
	if onCtx != "" {
		out = append(out, jen.If(jen.Id(onCtx)).Block(
			jen.Id(req).Op("=").Id(req).Dot("WithContext").Call(jen.Id(ctx)),
		))
	}
	return out
}

// onCtxRequest names the *http.Request parameter of m, a method with a
// context.Context first parameter, that a timeout's ctx goes on in when
// the request was made on that ctx (httpguard.OnContext), as a hedged
// race gives each source's ctx to it: a Do(ctx, req) that sends req as it
// is (client.Do(req), ignoring ctx) would otherwise run on the caller's
// ctx, past the timeout. A request on a ctx of its own keeps it, with its
// deadline and values. "" for a method without one.
func onCtxRequest(m *model.Method, names []string) string {
	if !m.Ctx || m.Request == 0 {
		return ""
	}
	return names[m.Request-1]
}

// judgedMethod is a guarded method whose outcome is not its error
// result: its last result carries the error, or a failure func judges its
// answers.
type judgedMethod struct {
	in              *model.Interface
	m               *model.Method
	a               *alloc
	recv, impl, ctx string
	names           []string
	call            *jen.Statement // the call of the wrapped method
	decl            *jen.Statement
	err, callName   string // the locals method() took for the error and the Call
	key             string // the local holding the key's route, "" if not keyed
	params, args    []jen.Code
	wrapper         *jen.Statement // the receiver's type
	chain           bool           // a chain's method
	iface           jen.Code       // the interface type, X or X[K, V]
}

// judged renders a judged method, whose body so far is body: the same call
// protocol as a plain method (EnterFast, Enter, Exit, PanicGuard), with the
// outcome in a local of its own.
func (g *gen) judged(f *jen.File, j judgedMethod, body []jen.Code) {
	m, a, r := j.m, j.a, j.m.Route
	if j.chain || r.Helper() {
		g.judgedTries(f, j, body)
		return
	}
	res := m.Sig.Results()
	n := res.Len()
	rnames := make([]string, n)
	for i := range n {
		rnames[i] = a.fresh("r" + strconv.Itoa(i))
	}
	c := m.Carrier
	errName, outcome := j.err, ""
	if c != nil {
		outcome = errName
		body = append(body, jen.Var().Id(errName).Error().Comment("the outcome: the Err() of "+rnames[n-1]))
	} else {
		rnames[n-1] = errName
	}
	callName, okName := j.callName, a.fresh("ok")
	route := func() *jen.Statement { return routeOf(j.recv, r, j.key) }
	// A refusal: in the carrier, or as the error result.
	refuse := append(g.refusal(c, rnames[n-1], errName), closeBody(m, j.names)...)
	refuse = append(refuse, jen.Return())
	enter := jen.If(
		jen.List(jen.Id(callName), jen.Id(errName)).Op("=").Add(route()).Dot("Enter").Call(jen.Id(j.ctx)),
		jen.Id(errName).Op("!=").Nil(),
	).Block(refuse...)
	if r.Settings.Rate.Per > 0 {
		body = append(body, jen.Var().Id(callName).Add(g.impl("Call")), enter)
	} else {
		body = append(body,
			jen.List(jen.Id(callName), jen.Id(okName)).Op(":=").Add(route()).Dot("EnterFast").Call(),
			jen.If(jen.Op("!").Id(okName)).Block(enter),
		)
	}
	if c == nil {
		outcome = a.fresh("outcome")
		body = append(body, jen.Var().Id(outcome).Error().Comment("the breaker's: "+outcomeNote(m)))
	}
	body = append(body, jen.Defer().Id(callName).Dot("Exit").Call(jen.Id(j.ctx), jen.Op("&").Id(outcome)))
	body = append(body, g.panicGuard(outcome)) // before the timeout: a nil ctx panics in it
	if m.UseTimeout {
		resp := ""
		if m.Response > 0 {
			resp = rnames[m.Response-1]
		}
		body = append(body, g.withTimeout(m, a, j.recv, r, j.ctx, j.names, resp)...)
	}
	body = append(body, g.judge(j, rnames, errName, outcome)...)
	body = append(body, jen.Return())
	comment(f, judgedDoc(g, j))
	f.Add(j.decl.Add(g.tr.results(res, rnames)).Block(body...))
}

// judgedDoc says how a judged method is guarded.
func judgedDoc(g *gen, j judgedMethod) string {
	m := j.m
	s := fmt.Sprintf("%s calls %s.%s through %s%s", m.Name, j.impl, m.Name, breakerDoc(m, j.names), ctxFromDoc(m, j.names))
	return s + judgedTail(g, j, false) + "."
}

// judgedTail says how a judged method's outcome is judged, and how a
// refusal reaches the caller of a wrapper (chain false).
func judgedTail(g *gen, j judgedMethod, chain bool) string {
	m, r := j.m, j.m.Route
	s := ""
	if c := m.Carrier; c != nil {
		ts := types.TypeString(c.Type, g.qualifier())
		s += fmt.Sprintf(". The %s it returns carries the outcome: its Err() is the failure", ts)
		if c.Miss != nil {
			s += fmt.Sprintf(", except %s (a miss), which is an answer", c.Miss.Text)
		}
		switch {
		case chain:
		case c.Refuse == model.CarrySetErr:
			s += fmt.Sprintf("; a refusal is returned as a new %s whose Err() is the refusal", ts)
		case c.Refuse == model.CarrySQLRow:
			s += "; a refusal is returned as a *sql.Row whose Err() (and Scan) is the refusal"
		}
	}
	s += answersDoc(m)
	if cs := m.Commands; cs != nil {
		s += fmt.Sprintf(". The breaker counts the first error among the commands it returns that is not %s, so that a miss ahead of a failed command hides no failure; the error returned is the wrapped method's", cs.Miss.Text)
	}
	if r.Failure != nil {
		s += fmt.Sprintf(". An answer for which %s returns an error counts as that failure, and still reaches the caller unchanged", r.Failure.Text)
	}
	return s
}

// qualifier names packages as the file imports them, for comments.
func (g *gen) qualifier() types.Qualifier {
	return func(p *types.Package) string {
		if p.Path() == g.local.Path() {
			return ""
		}
		if n, ok := g.im.names[p.Path()]; ok {
			return n
		}
		return p.Name()
	}
}

// ctxFromDoc says where the ctx of a method without a context.Context
// first parameter comes from, when a parameter gives it (or is one, of
// another type), or, for a method with one, that the timeout's ctx goes
// on in its *http.Request too (onCtxRequest); "" otherwise.
func ctxFromDoc(m *model.Method, names []string) string {
	if m.CtxFrom == 0 {
		if req := onCtxRequest(m, names); req != "" && m.UseTimeout {
			return fmt.Sprintf(" (%s, when made on %s, goes on with the timeout's ctx, through WithContext)", req, names[0])
		}
		return ""
	}
	p := names[m.CtxFrom-1]
	if m.CtxSelf {
		return fmt.Sprintf(", with %s as its context.Context", p)
	}
	s := fmt.Sprintf(", with the ctx of %s.Context()", p)
	if m.UseTimeout {
		s += fmt.Sprintf(" (%s goes on with the timeout's ctx, through WithContext)", p)
	}
	return s
}

// refusal renders how a refusal in errName reaches the caller of a method
// whose result carries its error: in a new value of the result (last), or
// a *sql.Row. Nothing for a method with an error result, which returns it.
func (g *gen) refusal(c *model.Carrier, last, errName string) []jen.Code {
	return g.carry(c, last, errName, "the refusal")
}

// carry renders how the error in errName, what, reaches the caller of a
// method whose result carries its error (see refusal).
func (g *gen) carry(c *model.Carrier, last, errName, what string) []jen.Code {
	if c == nil {
		return nil
	}
	switch c.Refuse {
	case model.CarrySetErr:
		elem := c.Type.(*types.Pointer).Elem()
		return []jen.Code{
			jen.Id(last).Op("=").New(g.tr.typ(elem)),
			jen.Id(last).Dot("SetErr").Call(jen.Id(errName)).Comment(what + " reaches the caller in it"),
		}
	case model.CarrySQLRow:
		return []jen.Code{
			jen.Id(last).Op("=").Qual(SQLImplPath, "Row").Call(jen.Id(errName)).Comment("a *sql.Row whose Err() is " + what),
		}
	}
	return nil
}

// judge renders the call of the wrapped method into the results rnames and
// the judging of its outcome into outcome: the carrier's Err() (a miss
// aside), then the failure func for an answer without an error.
func (g *gen) judge(j judgedMethod, rnames []string, errName, outcome string) []jen.Code {
	c, r, n := j.m.Carrier, j.m.Route, len(rnames)
	var lhs, answers []jen.Code
	for _, rn := range rnames {
		lhs = append(lhs, jen.Id(rn))
	}
	for _, rn := range rnames[:n-1] {
		answers = append(answers, jen.Id(rn))
	}
	out := []jen.Code{jen.List(lhs...).Op("=").Add(j.call)}
	if c != nil {
		last := rnames[n-1]
		answers = append(answers, jen.Id(last))
		// A nil carrier (a mock with no Return) is a failure, carried in
		// a new one: the caller would call Err() on nil.
		typ := types.TypeString(c.Type, g.qualifier())
		nilCarrier := append([]jen.Code{
			jen.Id(errName).Op("=").Add(g.impl("NilResult")).Call(jen.Lit(j.in.Name+"."+j.m.Name), jen.Lit(typ)),
		}, g.carry(c, last, errName, "the error")...)
		isNil := jen.If(jen.Id(last).Op("==").Nil()).Block(nilCarrier...).Else()
		if c.Miss != nil {
			out = append(out, isNil.If(jen.Id(errName).Op("=").Id(last).Dot("Err").Call(), jen.Id(errName).Op("==").Add(g.ref(c.Miss))).Block(
				jen.Id(errName).Op("=").Nil().Comment("a miss is an answer, not a failure"),
			))
		} else {
			out = append(out, isNil.Block(jen.Id(errName).Op("=").Id(last).Dot("Err").Call()))
		}
		if r.Failure != nil {
			out = append(out, jen.If(jen.Id(errName).Op("==").Nil()).Block(
				jen.Id(errName).Op("=").Add(g.ref(r.Failure)).Call(answers...),
			))
		}
		return out
	}
	if m := j.m; m.Response > 0 {
		// Neither an answer nor an error (http.Client refuses it from a
		// RoundTripper): a failure, returned as the error.
		resp := rnames[m.Response-1]
		typ := types.TypeString(m.Sig.Results().At(m.Response-1).Type(), g.qualifier())
		out = append(out, jen.If(jen.Id(errName).Op("==").Nil().Op("&&").Id(resp).Op("==").Nil()).Block(
			jen.Id(errName).Op("=").Add(g.impl("NilAnswer")).Call(jen.Lit(j.in.Name+"."+m.Name), jen.Lit(typ)).Comment("neither an answer nor an error: a failure"),
		))
	}
	if cs := j.m.Commands; cs != nil {
		// The first failed command's error, not go-redis's, which is the
		// first command's: a miss ahead of a failure would hide it.
		out = append(out, jen.Id(outcome).Op("=").Add(g.impl("FirstFailed")).Call(jen.Id(rnames[cs.Index]), jen.Id(errName), g.ref(&cs.Miss)).
			Comment("a miss is an answer: the caller still gets "+errName))
		if r.Failure != nil {
			out = append(out, jen.If(jen.Id(outcome).Op("==").Nil()).Block(
				jen.Id(outcome).Op("=").Add(g.ref(r.Failure)).Call(answers...).Comment("a failure answer still reaches the caller"),
			))
		}
		return out
	}
	return append(out, jen.If(jen.Id(outcome).Op("=").Id(errName), jen.Id(errName).Op("==").Nil()).Block(
		jen.Id(outcome).Op("=").Add(g.ref(r.Failure)).Call(answers...).Comment("a failure answer still reaches the caller"),
	))
}

// outcomeNote says what the outcome local of a judged method with an
// error result holds.
func outcomeNote(m *model.Method) string {
	r := m.Route
	switch {
	case m.Commands != nil && r.Failure != nil:
		return "the first failed command's error (a miss is none), or what " + r.Failure.Text + " makes of the answer"
	case m.Commands != nil:
		return "the first failed command's error (a miss is none), else err"
	}
	return "err, or what " + r.Failure.Text + " makes of the answer"
}

// judgedTries renders a judged method whose tries go through a helper
// making one try, and that helper: a wrapper's method whose route retries,
// judges its answers with a valid func or keeps them (stale), or a
// chain's method. A try that replaces an earlier one's *http.Response
// drains and closes that response's body (httpguard.Discard), and so does
// a chain moving on from a source's response: no caller ever sees it.
// When a try is refused after others were made, the last answer stands;
// when no try answered, a wrapper's answer is the refusal (in the carrier,
// or as the error), and a chain moves on. A hedged chain's method races
// its sources through race, as an error result's does.
func (g *gen) judgedTries(f *jen.File, j judgedMethod, body []jen.Code) {
	m, a, r := j.m, j.a, j.m.Route
	res := m.Sig.Results()
	n := res.Len()
	rnames := make([]string, n)
	for i := range n {
		rnames[i] = a.fresh("r" + strconv.Itoa(i))
	}
	c := m.Carrier
	errName, callName, okName := j.err, j.callName, a.fresh("ok")
	outcome := errName
	if c == nil {
		rnames[n-1] = errName
		outcome = a.fresh("outcome")
	}
	last := rnames[n-1]
	valid := ""
	if r.Valid != nil {
		valid = a.fresh("valid")
	}
	impl := ""
	if j.chain {
		impl = a.fresh("impl")
	}
	resp := ""
	if m.Response > 0 && c == nil {
		resp = rnames[m.Response-1]
	}
	var st *tries // the stale cache's key and value
	if m.StaleField != "" {
		st = &tries{m: m, names: j.names, rnames: rnames}
		g.stale(st)
		if len(j.names) > 2 || len(j.names) == 2 && !m.CtxFirst() {
			// A struct of the arguments: spelled once.
			key := a.fresh("key")
			body = append(body, jen.Id(key).Op(":=").Add(st.keyExpr))
			st.keyExpr = jen.Id(key)
		}
	}
	route := func() *jen.Statement { return routeOf(j.recv, r, j.key) }
	run, retry := "", a.fresh("retry")
	if j.chain {
		// Started in place, as a chain's method of an error result.
		run = a.fresh("run")
		body = append(body,
			jen.Var().Id(run).Add(g.impl("Chain")),
			jen.If(jen.Id(run).Dot("Start").Call(jen.Id(j.ctx), route())).Block(
				jen.Defer().Id(run).Dot("Done").Call(),
			),
		)
	}
	hedged := j.chain && m.Hedged // a wrapper asks its one source
	var marks []string
	if !hedged {
		var code []jen.Code
		if j.chain || r.Retries() {
			marks, code = markReaders(a, m, j.names)
		}
		body = append(body, code...)
		body = append(body, jen.Id(retry).Op(":=").Add(route()).Dot("Retry").Call())
	}
	// A race's outcome is read only by the cache: when no source
	// answered, a carrier takes the chain's error (run.Err()), not it.
	unread := hedged && st == nil
	switch {
	case c != nil:
		body = append(body, jen.Var().Id(errName).Error().Comment("the outcome of the last try: the Err() of "+last))
	case !unread:
		body = append(body, jen.Var().Id(outcome).Error().Comment("the last try's: "+outcomeNote(m)))
	}
	// A wrapper without a cache returns an invalid answer as it is: only
	// a chain and a cache read valid, and a race reads it in its closure.
	readsValid := valid != "" && (j.chain || st != nil) && !hedged
	if readsValid {
		body = append(body, jen.Var().Id(valid).Bool().Comment("whether the last try's answer passed "+r.Valid.Text))
	}
	// Leaving the loop: a wrapper without a cache returns what it has; a
	// chain and a cache go on.
	leave := jen.Return()
	if j.chain || st != nil {
		leave = jen.Break()
	}
	var wrapperClose []jen.Code // a wrapper's client closes the body no try sent
	if !j.chain {
		wrapperClose = closeBody(m, j.names)
	}
	var enter []jen.Code
	if c != nil {
		refused := []jen.Code{}
		if !j.chain {
			refused = append(refused, jen.If(jen.Id(last).Op("==").Nil()).Block(g.refusal(c, last, errName)...))
		}
		refused = append(refused, leave.Clone().Comment("else the last try's answer stands"))
		enter = []jen.Code{jen.If(
			jen.List(jen.Id(callName), jen.Id(errName)).Op("=").Id(retry).Dot("Enter").Call(jen.Id(j.ctx), jen.Id(errName)),
			jen.Id(errName).Op("!=").Nil(),
		).Block(refused...)}
	} else {
		refused := a.fresh("refused")
		enter = []jen.Code{
			jen.Var().Id(refused).Error(),
			jen.If(
				jen.List(jen.Id(callName), jen.Id(refused)).Op("=").Id(retry).Dot("Enter").Call(jen.Id(j.ctx), jen.Id(outcome)),
				jen.Id(refused).Op("!=").Nil(),
			).Block(
				jen.If(jen.Id(outcome).Op("==").Nil()).Block(append([]jen.Code{
					jen.List(jen.Id(errName), jen.Id(outcome)).Op("=").List(jen.Id(refused), jen.Id(refused)).Comment("no try answered"),
				}, wrapperClose...)...),
				leave.Clone().Comment("else the last try's answer stands"),
			),
		}
	}
	loop := []jen.Code{
		jen.List(jen.Id(callName), jen.Id(okName)).Op(":=").Id(retry).Dot("EnterFast").Call(),
		jen.If(jen.Op("!").Id(okName)).Block(enter...),
	}
	if replaced := released(m, rnames, "the answer this try replaces: no caller sees it"); len(replaced) > 0 && c == nil && r.Retries() {
		loop = append(loop, jen.If(jen.Id(retry).Dot("Tries").Call().Op(">").Lit(1)).Block(replaced...))
	}
	// The helper takes ctx first, then the call, then the source (in a
	// chain), then the rest.
	rest, restParams := j.args, j.params
	var tparams []jen.Code
	if m.Ctx {
		rest, restParams = j.args[1:], j.params[1:]
		tparams = append(tparams, j.params[0])
	} else {
		tparams = append(tparams, jen.Id(j.ctx).Qual("context", "Context"))
	}
	tparams = append(tparams, jen.Id(callName).Add(g.impl("Call")))
	if j.chain {
		tparams = append(tparams, jen.Id(impl).Add(j.iface))
	}
	tparams = append(tparams, restParams...)
	var lhs []jen.Code
	for _, rn := range rnames {
		lhs = append(lhs, jen.Id(rn))
	}
	switch {
	case readsValid:
		lhs = append(lhs, jen.Id(valid))
	case valid != "":
		lhs = append(lhs, jen.Id("_"))
	}
	lhs = append(lhs, jen.Id(outcome))
	try := func(src jen.Code) *jen.Statement {
		args := []jen.Code{jen.Id(j.ctx), jen.Id(callName)}
		if j.chain {
			args = append(args, src)
		}
		return jen.List(lhs...).Op("=").Id(j.recv).Dot(m.Try).Call(append(args, rest...)...)
	}
	loop = append(loop,
		try(jen.Id(j.recv).Dot(j.impl)),
		jen.If(jen.Op("!").Id(retry).Dot("Again").Call(jen.Id(j.ctx), jen.Id(outcome))).Block(leave),
	)
	unsent := ""
	if m.Request > 0 || len(marks) > 0 {
		unsent = a.fresh("unsent")
		loop = append(loop, rewind(m, j.names, marks, unsent, leave.Clone().Comment("its body cannot be sent again: the last answer stands"))...)
	}
	if !hedged {
		body = append(body, jen.For().Block(loop...))
	}

	// After the tries: the chain's fallbacks, the cache.
	put := func() jen.Code {
		p := jen.Id(j.recv).Dot(m.StaleField).Dot("Put").Call(st.keyExpr, st.val)
		if c != nil && c.Miss != nil {
			// A miss is an answer, but an empty one: never kept (SPEC §6).
			return jen.If(jen.Id(last).Dot("Err").Call().Op("==").Nil()).Block(p)
		}
		return p
	}
	v, age := a.fresh("v"), a.fresh("age")
	getStale := func(found ...jen.Code) jen.Code {
		ret := st.unpack(v)
		if c == nil {
			ret = append(ret, jen.Nil())
		}
		ageName := "_" // nothing to write it in without a ctx
		if len(found) > 0 {
			ageName = age
		}
		return jen.If(
			jen.List(jen.Id(v), jen.Id(ageName), jen.Id(okName)).Op(":=").Id(j.recv).Dot(m.StaleField).Dot("Get").Call(st.keyExpr),
			jen.Id(okName),
		).Block(append(found, jen.Return(ret...))...)
	}
	var discard []jen.Code
	if c == nil {
		discard = passedOver(m, rnames)
	}
	// No source answered: the chain's error, and no other result; a
	// client's request no source sent has its body closed (sentEnd).
	var sentEnd []jen.Code
	chainErr := func() []jen.Code {
		out := sentEnd
		var ret []jen.Code
		for i := range n - 1 {
			zero := a.fresh("zero")
			out = append(out, jen.Var().Id(zero).Add(g.tr.typ(res.At(i).Type())))
			ret = append(ret, jen.Id(zero))
		}
		if c != nil {
			out = append(out, jen.Id(errName).Op("=").Id(run).Dot("Err").Call())
			out = append(out, g.carry(c, last, errName, "the chain's error")...)
			ret = append(ret, jen.Id(last))
		} else {
			ret = append(ret, jen.Id(run).Dot("Err").Call())
		}
		return append(out, jen.Return(ret...))
	}
	switch {
	case hedged:
		t := &tries{in: j.in, m: m, r: r, a: a, recv: j.recv, impl: j.impl, err: errName, call: callName, ctx: j.ctx, key: j.key,
			names: j.names, params: j.params, args: j.args, chain: true, iface: j.iface, rnames: rnames, valid: valid,
			implName: impl, judged: true, outcome: outcome, unread: unread}
		var hit jen.Code
		var putF func() jen.Code
		if st != nil {
			hit, putF = getStale(jen.Id(run).Dot("Stale").Call(jen.Id(age))), put
		}
		body = append(body, g.race(t, j.wrapper, run, putF, hit)...)
		body = append(body, chainErr()...)
	case j.chain:
		answered := []jen.Code{jen.Return()}
		if st != nil {
			answered = []jen.Code{jen.If(jen.Id(outcome).Op("==").Nil()).Block(put()), jen.Return()}
		}
		mark := func(method string, args ...jen.Code) *jen.Statement {
			args = append(args, jen.Id(outcome))
			if valid != "" {
				method += "Valid"
				args = append(args, jen.Id(valid))
			}
			return jen.Id(run).Dot(method).Call(args...)
		}
		i, fb, call := a.fresh("i"), a.fresh("fb"), a.fresh("call")
		fbRoute := jen.Id(j.recv).Dot(r.FallbackField).Index(jen.Id(i))
		body = append(body, jen.If(mark("Primary", route(), jen.Id(retry).Dot("Tries").Call())).Block(answered...))
		body = append(body, discard...)
		callName = call // the fallback's try
		before, fbBody, asked, end := resend(a, m, j.names, marks, unsent, run, fbRoute, jen.Id(retry).Dot("Tries").Call())
		sentEnd = end
		body = append(body, before...)
		fbBody = append(fbBody,
			jen.List(jen.Id(call), jen.Id(okName)).Op(":=").Id(run).Dot("Fallback").Call(fbRoute),
			jen.If(jen.Op("!").Id(okName)).Block(jen.Continue()),
		)
		fbBody = append(fbBody, asked...)
		fbBody = append(fbBody,
			try(jen.Id(fb).Dot("Impl")),
			jen.If(mark("Answered", fbRoute.Clone())).Block(answered...),
		)
		fbBody = append(fbBody, discard...)
		body = append(body, jen.For(jen.List(jen.Id(i), jen.Id(fb)).Op(":=").Range().Id(j.recv).Dot(j.in.FallbacksField)).Block(fbBody...))
		if st != nil {
			body = append(body, getStale(jen.Id(run).Dot("Stale").Call(jen.Id(age))))
		}
		body = append(body, chainErr()...)
	case st != nil:
		answer := jen.Id(outcome).Op("==").Nil()
		if valid != "" {
			answer = answer.Op("&&").Id(valid)
		}
		body = append(body, jen.If(answer).Block(put(), jen.Return()))
		if len(r.Exclude) > 0 {
			body = append(body, jen.If(route().Dot("Excluded").Call(jen.Id(outcome))).Block(jen.Return()))
		}
		var found []jen.Code
		if m.Ctx || m.CtxFrom > 0 {
			found = append(found, g.impl("ServedStale").Call(jen.Id(j.ctx), jen.Id(age)))
		}
		body = append(body, getStale(found...), jen.Return())
	}
	comment(f, judgedTriesDoc(g, j))
	f.Add(j.decl.Clone().Add(g.tr.results(res, rnames)).Block(body...))

	// The helper: one try.
	var tres []jen.Code
	for i, rn := range rnames {
		if c == nil && i == n-1 && valid == "" {
			tres = append(tres, jen.Id(rn)) // err, outcome error
			continue
		}
		tres = append(tres, jen.Id(rn).Add(g.tr.typ(res.At(i).Type())))
	}
	if valid != "" {
		tres = append(tres, jen.Id(valid).Bool())
	}
	tres = append(tres, jen.Id(outcome).Error())
	callName = j.callName
	var tbody []jen.Code
	if valid != "" {
		tbody = append(tbody,
			jen.Id(valid).Op("=").True(),
			jen.Defer().Id(callName).Dot("ExitValid").Call(jen.Id(j.ctx), jen.Op("&").Id(outcome), jen.Op("&").Id(valid)),
		)
	} else {
		tbody = append(tbody, jen.Defer().Id(callName).Dot("Exit").Call(jen.Id(j.ctx), jen.Op("&").Id(outcome)))
	}
	tbody = append(tbody, g.panicGuard(outcome)) // before the timeout: a nil ctx panics in it
	if m.UseTimeout {
		tbody = append(tbody, g.withTimeout(m, a, j.recv, r, j.ctx, j.names, resp)...)
	}
	tj := j
	if j.chain {
		tj.call = jen.Id(impl).Dot(m.Name).Call(j.args...)
	}
	tbody = append(tbody, g.judge(tj, rnames, errName, outcome)...)
	if valid != "" {
		var answers []jen.Code
		for _, rn := range rnames[:n-1] {
			answers = append(answers, jen.Id(rn))
		}
		if c != nil {
			answers = append(answers, jen.Id(last))
		}
		tbody = append(tbody, g.judgeValid(outcome, valid, r, answers...))
	}
	tbody = append(tbody, jen.Return())
	f.Line()
	if j.chain {
		comment(f, fmt.Sprintf("%s makes one try of %s on %s through its route.", m.Try, m.Name, impl))
	} else {
		comment(f, fmt.Sprintf("%s makes one try of %s through its route.", m.Try, m.Name))
	}
	f.Func().Params(jen.Id(j.recv).Op("*").Add(j.wrapper)).Id(m.Try).Params(tparams...).Parens(jen.List(tres...)).Block(tbody...)
}

// judgedTriesDoc says how a judged method with a helper is guarded.
func judgedTriesDoc(g *gen, j judgedMethod) string {
	m, r := j.m, j.m.Route
	var s string
	if j.chain {
		s = fmt.Sprintf("%s asks %s.%s through %s%s%s, then each fallback", m.Name, j.impl, m.Name, breakerDoc(m, j.names), routeExtras(r, m), ctxFromDoc(m, j.names))
		if r.Stale > 0 {
			s += ", then the stale cache"
		}
		if j.chain && m.Hedged {
			extra := "the next one is asked too"
			if r.Hedges > 1 {
				extra = fmt.Sprintf("the next one is asked too, up to %d extra sources at once", r.Hedges)
			}
			s += fmt.Sprintf("; when the source asked last has not answered within %s, %s, and the first valid answer wins", r.Hedge, extra)
		}
		s += judgedTail(g, j, true)
		if c := m.Carrier; c != nil {
			s += fmt.Sprintf(". When no source answers, the *runtime.ChainError is returned in a new %s", types.TypeString(c.Type, g.qualifier()))
		}
		switch {
		case m.Response > 0 && m.Carrier == nil && m.Hedged:
			s += ". The response of a source passed over, or of one that lost, is closed"
		case m.Response > 0 && m.Carrier == nil:
			s += ". The response of a source passed over is drained and closed"
		}
		return s + "."
	}
	s = judgedDoc(g, j)
	s = s[:len(s)-1]
	if r.Retries() {
		s += ". Each try goes through the breaker; when a try is refused after others were made, the last answer stands"
		if m.Response > 0 && m.Carrier == nil {
			s += ", and a response a later try replaces is drained and closed"
		}
	}
	if r.Valid != nil {
		s += fmt.Sprintf(". An answer for which %s returns false is no data: neither success nor failure", r.Valid.Text)
	}
	if r.Stale > 0 {
		s += fmt.Sprintf(". The last valid answer for the same arguments is kept for %s and served when the call fails or is refused", shortDuration(r.Stale))
	}
	return s + "."
}
