package ifacegen

import "slices"

// Judged methods (SPEC §6 and §12): a last result that carries its error
// (a carrier with Err and SetErr, *sql.Row), or an *http.Response. Every
// decision here is drawn from g.rJudge, a stream of its own, so that a
// seed whose draws give it none of them keeps the interfaces it had
// before.

var (
	pSQL = &pkg{"database/sql", "sql"}
	// *sql.Row carries its error; its zero value's Err() is nil.
	stdRow = &named{pkg: pSQL, name: "Row"}
)

func (g *gen) jchance(p float64) bool { return g.rJudge.Float64() < p }
func (g *gen) jintn(n int) int        { return g.rJudge.IntN(n) }
func jpick[T any](g *gen, xs []T) T   { return xs[g.rJudge.IntN(len(xs))] }

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
