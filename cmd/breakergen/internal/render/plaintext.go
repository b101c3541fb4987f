package render

import (
	"bytes"
	"go/types"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/model"
)

// A plain method's body (method(), the shape most methods have) is written
// here as text, gofmt-clean as it stands, rather than as a jennifer tree:
// the file's format.Source then parses and prints a marker statement in its
// place instead of the body, and the marker's line is replaced by the text
// afterwards (spliceBodies). go/format is most of a run over a package that
// keeps its interfaces in one file (docs/generator-speed.md), and these
// bodies are most of what it formats. The text is the bytes gofmt prints
// for the jennifer tree method() builds otherwise: the golden tests hold
// the two to each other, and a body that gofmt would lay out otherwise (a
// deferred closure too long for one line, an HTTP response read after
// the call) keeps the jennifer tree.

// textBodies is off in the test that holds the text to the trees.
var textBodies = true

// bodyMarker starts the marker statement of a body written as text; no
// generated body has an identifier of its own that starts so.
const bodyMarker = "_breakergenBody"

// plainBody is the body of a plain method, the statements method() emits
// after the ctx line (if any): pre holds that line.
type plainBody struct {
	pre                   string // the ctx line, or ""
	recv, field, impl     string
	method, ctx, err, cal string
	names                 []string
	variadic              bool
	rate                  bool // the route has a limiter: Enter, not EnterFast
	timeout               bool
	ctxFrom               string // the parameter a timeout's ctx goes back into, or ""
	background            bool   // pre is ctx := context.Background()
	convert               bool   // pre is ctx := context.Context(p)
}

// textBody writes b as text and returns the marker statement that stands
// in its place, or nil when b must be a jennifer tree. a gives the names
// the jennifer tree would take, in the same order.
func (g *gen) textBody(b plainBody, a *alloc) jen.Code {
	text, ok := g.plainText(b, a)
	if !ok {
		return nil
	}
	g.bodies = append(g.bodies, text)
	// The marker names the packages the body uses, so that jennifer
	// imports them even when nothing else in the file does.
	uses := []jen.Code{g.impl("PanicGuard")}
	if b.background {
		uses = append(uses, jen.Qual("context", "Background"))
	}
	if b.convert {
		uses = append(uses, jen.Qual("context", "Context"))
	}
	return jen.Id(bodyMarker + strconv.Itoa(len(g.bodies)-1)).Call(uses...)
}

// plainText is b as text (its lines, each ending in a newline), or false
// when b must be a jennifer tree. a gives the names the jennifer tree would
// take, in the same order.
func (g *gen) plainText(b plainBody, a *alloc) (string, bool) {
	impl, ctx := g.im.names[ImplPath], g.im.names["context"]
	done := b.cal + ".Done(" + b.ctx + ", " + b.err + ", " + b.err + " == " + impl + ".PanicGuard && " + b.cal + ".Unreturned(" + b.ctx + ", recover()))"
	// gofmt keeps a func literal on one line while "func() " and its
	// body take at most 100 columns (go/printer's funcBody).
	usesCtx := b.background || b.convert
	if !textBodies || impl == "" || !b.timeout && len("func() ")+len(done) > 100 || usesCtx && ctx == "" {
		return "", false
	}
	route := b.recv + "." + b.field
	var s strings.Builder
	line := func(depth int, parts ...string) {
		s.WriteString(strings.Repeat("\t", depth+1))
		for _, p := range parts {
			s.WriteString(p)
		}
		s.WriteByte('\n')
	}
	if b.pre != "" {
		line(0, b.pre)
	}
	if b.rate {
		line(0, b.cal, ", ", b.err, " := ", route, ".Enter(", b.ctx, ")")
		line(0, "if ", b.err, " != nil {")
		line(1, "return")
		line(0, "}")
	} else {
		ok := a.fresh("ok")
		line(0, b.cal, ", ", ok, " := ", route, ".EnterFast()")
		line(0, "if !", ok, " {")
		line(1, "if ", b.err, " = ", b.cal, ".Refusal(); ", b.err, " != nil {")
		line(2, "return")
		line(1, "}")
		line(1, "if ", b.cal, ", ", b.err, " = ", route, ".Enter(", b.ctx, "); ", b.err, " != nil {")
		line(2, "return")
		line(1, "}")
		line(0, "}")
	}
	if b.timeout {
		line(0, "defer ", b.cal, ".Exit(", b.ctx, ", &", b.err, ")")
		line(0, b.err, " = ", impl, ".PanicGuard // stays only if the call panics")
		cancel := a.fresh("cancel")
		line(0, b.ctx, ", ", cancel, " := ", impl, ".WithTimeout(", b.ctx, ", ", route, ".Timeout())")
		line(0, "defer ", cancel, "()")
		if b.ctxFrom != "" {
			line(0, b.ctxFrom, " = ", b.ctxFrom, ".WithContext(", b.ctx, ")")
		}
	} else {
		line(0, "defer func() { ", done, " }()")
		line(0, b.err, " = ", impl, ".PanicGuard // stays only if the call panics")
	}
	args := strings.Join(b.names, ", ")
	if b.variadic {
		args += "..."
	}
	line(0, "return ", b.recv, ".", b.impl, ".", b.method, "(", args, ")")
	return s.String(), true
}

// spliceBodies replaces each marker line of src, a part formatted by
// jennifer, by the body it stands for.
func spliceBodies(src []byte, bodies []string) []byte {
	return splice(src, "\t"+bodyMarker, 0, bodies)
}

// splice replaces each line of src that holds mark followed by a number k
// by texts[k]; the first keep bytes of mark stay (the newline that ends
// the line before it). The rest of the marker's line goes.
func splice(src []byte, mark string, keep int, texts []string) []byte {
	if len(texts) == 0 {
		return src
	}
	var out bytes.Buffer
	n := len(src)
	for _, t := range texts {
		n += len(t)
	}
	out.Grow(n)
	m := []byte(mark)
	for {
		i := bytes.Index(src, m)
		if i < 0 {
			out.Write(src)
			return out.Bytes()
		}
		out.Write(src[:i+keep])
		src = src[i+len(m):]
		k := 0
		for len(src) > 0 && '0' <= src[0] && src[0] <= '9' {
			k = k*10 + int(src[0]-'0')
			src = src[1:]
		}
		out.WriteString(texts[k])
		if j := bytes.IndexByte(src, '\n'); j >= 0 {
			src = src[j+1:]
		} else {
			src = nil
		}
	}
}

// plainCtx is the ctx line of a plain method as text: "" when ctx is its
// first parameter. A ctx from a parameter that may be nil comes after the
// check method() writes for it (see nilCtxFrom).
func (g *gen) plainCtx(in *model.Interface, m *model.Method, ctx, errName string, names []string) string {
	switch {
	case m.Ctx:
		return ""
	case m.CtxFrom > 0:
		line := ctx + " := " + names[m.CtxFrom-1] + ".Context()"
		if m.CtxSelf {
			line = ctx + " := " + g.im.names["context"] + ".Context(" + names[0] + ")"
		}
		if p, typ, ok := g.nilCtxFrom(m, names); ok {
			line = "if " + p + " == nil {\n\t\t" + errName + " = " + g.qualText(ImplPath, "NilArg") + "(" +
				strconv.Quote(in.Name+"."+m.Name) + ", " + strconv.Quote(userParam(m, m.CtxFrom-1, p)) + ", " + strconv.Quote(typ) + ")\n\t\treturn\n\t}\n\t" + line
		}
		return line
	}
	return ctx + " := " + g.im.names["context"] + ".Background()"
}

// nilCtxFrom reports whether the parameter that gives method m its ctx
// (an *http.Request, or a context.Context of another type) can be nil, with its name and its type as the
// caller's package writes it: the wrapper then answers a nil one with
// breakerimpl.NilArg, in the method's error result, before the ctx line
// would panic on it. A method whose result carries its error (go-redis,
// *sql.Row) has no such check.
func (g *gen) nilCtxFrom(m *model.Method, names []string) (param, typ string, ok bool) {
	if m.CtxFrom == 0 || m.Carrier != nil {
		return "", "", false
	}
	res := m.Sig.Results()
	if n := res.Len(); n == 0 || !types.Identical(res.At(n-1).Type(), types.Universe.Lookup("error").Type()) {
		return "", "", false
	}
	t := m.Sig.Params().At(m.CtxFrom - 1).Type()
	if _, tp := t.(*types.TypeParam); tp {
		return "", "", false
	}
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface:
		return names[m.CtxFrom-1], types.TypeString(t, g.qualifier()), true
	}
	return "", "", false
}

// userParam is the name a message gives the parameter the wrapper calls
// name: "" when the interface left it unnamed (name is the wrapper's own).
func userParam(m *model.Method, i int, name string) string {
	if n := m.Sig.Params().At(i).Name(); n == "" || n == "_" {
		return ""
	}
	return name
}
