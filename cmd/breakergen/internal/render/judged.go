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
// WithContext. resp, if not "", names a *http.Response result: its body
// holds the timeout's cancel until the caller closes it, since the body
// is read after the call returns; otherwise the cancel is deferred.
func (g *gen) withTimeout(m *model.Method, a *alloc, recv string, r *model.Route, ctx string, names []string, resp string) []jen.Code {
	cancel := a.fresh("cancel")
	timeout := jen.Id(recv).Dot(r.Field).Dot("Timeout").Call()
	if r.Family != nil {
		// The line's timeout, which every key's route has: a try's helper
		// does not hold the key's route.
		timeout = jen.Add(g.duration(r.Timeout))
	}
	out := []jen.Code{
		jen.List(jen.Id(ctx), jen.Id(cancel)).Op(":=").Add(g.impl("WithTimeout")).Call(jen.Id(ctx), timeout),
	}
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
	return out
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
}

// judged renders a judged method, whose body so far is body: the same call
// protocol as a plain method (EnterFast, Enter, Exit, PanicGuard), with the
// outcome in a local of its own.
func (g *gen) judged(f *jen.File, j judgedMethod, body []jen.Code) {
	m, a, r := j.m, j.a, j.m.Route
	if r.Retries() {
		g.judgedRetry(f, j, body)
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
	refuse := append(g.refusal(c, rnames[n-1], errName), jen.Return())
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
		body = append(body, jen.Var().Id(outcome).Error().Comment("the breaker's: err, or what "+r.Failure.Text+" makes of the answer"))
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
	comment(f, judgedDoc(g, j, rnames))
	f.Add(j.decl.Add(g.tr.results(res, rnames)).Block(body...))
}

// judgedDoc says how a judged method is guarded.
func judgedDoc(g *gen, j judgedMethod, rnames []string) string {
	m, r := j.m, j.m.Route
	s := fmt.Sprintf("%s calls %s.%s through %s%s", m.Name, j.impl, m.Name, breakerDoc(m, j.names), ctxFromDoc(m, j.names))
	if c := m.Carrier; c != nil {
		ts := types.TypeString(c.Type, g.qualifier())
		s += fmt.Sprintf(". The %s it returns carries the outcome: its Err() is the failure", ts)
		if c.Miss != nil {
			s += fmt.Sprintf(", except %s (a miss), which is an answer", c.Miss.Text)
		}
		switch c.Refuse {
		case model.CarrySetErr:
			s += fmt.Sprintf("; a refusal is returned as a new %s whose Err() is the refusal", ts)
		case model.CarrySQLRow:
			s += "; a refusal is returned as a *sql.Row whose Err() (and Scan) is the refusal"
		}
	}
	if r.Failure != nil {
		s += fmt.Sprintf(". An answer for which %s returns an error counts as that failure, and still reaches the caller unchanged", r.Failure.Text)
	}
	return s + "."
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
// first parameter comes from, when a parameter gives it; "" otherwise.
func ctxFromDoc(m *model.Method, names []string) string {
	if m.CtxFrom == 0 {
		return ""
	}
	p := names[m.CtxFrom-1]
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
	if c == nil {
		return nil
	}
	switch c.Refuse {
	case model.CarrySetErr:
		elem := c.Type.(*types.Pointer).Elem()
		return []jen.Code{
			jen.Id(last).Op("=").New(g.tr.typ(elem)),
			jen.Id(last).Dot("SetErr").Call(jen.Id(errName)).Comment("the refusal reaches the caller in it"),
		}
	case model.CarrySQLRow:
		return []jen.Code{
			jen.Id(last).Op("=").Qual(SQLImplPath, "Row").Call(jen.Id(errName)).Comment("a *sql.Row whose Err() is the refusal"),
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
		if c.Miss != nil {
			out = append(out, jen.If(jen.Id(errName).Op("=").Id(last).Dot("Err").Call(), jen.Id(errName).Op("==").Add(g.ref(c.Miss))).Block(
				jen.Id(errName).Op("=").Nil().Comment("a miss is an answer, not a failure"),
			))
		} else {
			out = append(out, jen.Id(errName).Op("=").Id(last).Dot("Err").Call())
		}
		if r.Failure != nil {
			out = append(out, jen.If(jen.Id(errName).Op("==").Nil()).Block(
				jen.Id(errName).Op("=").Add(g.ref(r.Failure)).Call(answers...),
			))
		}
		return out
	}
	return append(out, jen.If(jen.Id(outcome).Op("=").Id(errName), jen.Id(errName).Op("==").Nil()).Block(
		jen.Id(outcome).Op("=").Add(g.ref(r.Failure)).Call(answers...).Comment("a failure answer still reaches the caller"),
	))
}

// judgedRetry renders a judged method whose route retries, and its helper
// making one try. A try that replaces an earlier one's *http.Response
// drains and closes that response's body (httpguard.Discard): no caller
// ever sees it. When a try is refused after others were made, the last
// answer stands.
func (g *gen) judgedRetry(f *jen.File, j judgedMethod, body []jen.Code) {
	m, a, r := j.m, j.a, j.m.Route
	res := m.Sig.Results()
	n := res.Len()
	rnames := make([]string, n)
	for i := range n {
		rnames[i] = a.fresh("r" + strconv.Itoa(i))
	}
	c := m.Carrier
	errName, callName, okName := j.err, j.callName, a.fresh("ok")
	retry := a.fresh("retry")
	outcome := errName
	if c == nil {
		rnames[n-1] = errName
		outcome = a.fresh("outcome")
	}
	route := routeOf(j.recv, r, j.key)
	body = append(body, jen.Id(retry).Op(":=").Add(route).Dot("Retry").Call())
	if c != nil {
		body = append(body, jen.Var().Id(errName).Error().Comment("the outcome of the last try: the Err() of "+rnames[n-1]))
	} else {
		body = append(body, jen.Var().Id(outcome).Error().Comment("the last try's: err, or what "+r.Failure.Text+" makes of the answer"))
	}
	var enter []jen.Code
	if c != nil {
		enter = []jen.Code{jen.If(
			jen.List(jen.Id(callName), jen.Id(errName)).Op("=").Id(retry).Dot("Enter").Call(jen.Id(j.ctx), jen.Id(errName)),
			jen.Id(errName).Op("!=").Nil(),
		).Block(
			jen.If(jen.Id(retry).Dot("Tries").Call().Op("==").Lit(0)).Block(g.refusal(c, rnames[n-1], errName)...),
			jen.Return().Comment("else the last try's answer stands"),
		)}
	} else {
		refused := a.fresh("refused")
		enter = []jen.Code{
			jen.Var().Id(refused).Error(),
			jen.If(
				jen.List(jen.Id(callName), jen.Id(refused)).Op("=").Id(retry).Dot("Enter").Call(jen.Id(j.ctx), jen.Id(outcome)),
				jen.Id(refused).Op("!=").Nil(),
			).Block(
				jen.If(jen.Id(retry).Dot("Tries").Call().Op("==").Lit(0)).Block(jen.Id(errName).Op("=").Id(refused)),
				jen.Return().Comment("else the last try's answer stands"),
			),
		}
	}
	loop := []jen.Code{
		jen.List(jen.Id(callName), jen.Id(okName)).Op(":=").Id(retry).Dot("EnterFast").Call(),
		jen.If(jen.Op("!").Id(okName)).Block(enter...),
	}
	if m.Response > 0 && c == nil {
		loop = append(loop, jen.If(jen.Id(retry).Dot("Tries").Call().Op(">").Lit(1)).Block(
			jen.Qual(HTTPGuardPath, "Discard").Call(jen.Id(rnames[m.Response-1])).Comment("the answer this try replaces: no caller sees it"),
		))
	}
	// The helper takes ctx first, then the call, then the rest.
	rest, restParams := j.args, j.params
	var tparams []jen.Code
	if m.Ctx {
		rest, restParams = j.args[1:], j.params[1:]
		tparams = append(tparams, j.params[0])
	} else {
		tparams = append(tparams, jen.Id(j.ctx).Qual("context", "Context"))
	}
	tparams = append(tparams, jen.Id(callName).Add(g.impl("Call")))
	tparams = append(tparams, restParams...)
	targs := append([]jen.Code{jen.Id(j.ctx), jen.Id(callName)}, rest...)
	var lhs []jen.Code
	for _, rn := range rnames {
		lhs = append(lhs, jen.Id(rn))
	}
	if c != nil {
		lhs = append(lhs, jen.Id(errName))
	} else {
		lhs = append(lhs, jen.Id(outcome))
	}
	loop = append(loop,
		jen.List(lhs...).Op("=").Id(j.recv).Dot(m.Try).Call(targs...),
		jen.If(jen.Op("!").Id(retry).Dot("Again").Call(jen.Id(j.ctx), jen.Id(outcome))).Block(jen.Return()),
	)
	body = append(body, jen.For().Block(loop...))
	doc := judgedDoc(g, j, rnames)
	doc += " Each try goes through the breaker; when a try is refused after others were made, the last answer stands"
	if m.Response > 0 && c == nil {
		doc += ", and a response a later try replaces is drained and closed"
	}
	comment(f, doc+".")
	f.Add(j.decl.Clone().Add(g.tr.results(res, rnames)).Block(body...))

	// The helper: one try.
	var tres []jen.Code
	for i, rn := range rnames {
		if c == nil && i == n-1 {
			tres = append(tres, jen.Id(rn)) // err, outcome error
			continue
		}
		tres = append(tres, jen.Id(rn).Add(g.tr.typ(res.At(i).Type())))
	}
	tres = append(tres, jen.Id(outcome).Error())
	tbody := []jen.Code{jen.Defer().Id(callName).Dot("Exit").Call(jen.Id(j.ctx), jen.Op("&").Id(outcome))}
	tbody = append(tbody, g.panicGuard(outcome)) // before the timeout: a nil ctx panics in it
	if m.UseTimeout {
		resp := ""
		if m.Response > 0 {
			resp = rnames[m.Response-1]
		}
		tbody = append(tbody, g.withTimeout(m, a, j.recv, r, j.ctx, j.names, resp)...)
	}
	tbody = append(tbody, g.judge(j, rnames, errName, outcome)...)
	tbody = append(tbody, jen.Return())
	f.Line()
	comment(f, fmt.Sprintf("%s makes one try of %s through its route.", m.Try, m.Name))
	f.Func().Params(jen.Id(j.recv).Op("*").Add(j.wrapper)).Id(m.Try).Params(tparams...).Parens(jen.List(tres...)).Block(tbody...)
}
