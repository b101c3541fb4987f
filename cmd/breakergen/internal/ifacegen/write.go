package ifacegen

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// file is one file being written: it names the packages it imports.
type file struct {
	g        *gen
	self     *pkg
	test     bool // the forwarding test: every import gets an fz name
	imports  map[*pkg]string
	used     map[string]bool // import names taken, and names they must not take
	reserved map[string]bool // the package scope's names
	uses     []string        // lines that keep imports used
}

func (g *gen) newFile(self *pkg, test bool, reserved map[string]bool, blocked []string) *file {
	f := &file{g: g, self: self, test: test, imports: map[*pkg]string{}, used: map[string]bool{}, reserved: reserved}
	for _, n := range blocked {
		f.used[n] = true
	}
	return f
}

// qual is the qualifier of p's names in f: "name." or "".
func (f *file) qual(p *pkg) string {
	if p == nil || p == f.self {
		return ""
	}
	if n, ok := f.imports[p]; ok {
		return n + "."
	}
	base := p.name
	switch {
	case f.test:
		base = "fz" + p.name
	case f.g.chance(0.12):
		base = pick(f.g, []string{"std" + p.name, p.name + "pkg", "x" + p.name})
	}
	name := base
	for i := 2; f.used[name] || f.reserved[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	f.used[name] = true
	f.imports[p] = name
	return name + "."
}

// use keeps an import used.
func (f *file) use(expr string) {
	l := "var _ = " + expr
	if !slices.Contains(f.uses, l) {
		f.uses = append(f.uses, l)
	}
}

// finish puts the package clause and the imports before body.
func (f *file) finish(build, pkgName, body string) string {
	var b strings.Builder
	if build != "" {
		b.WriteString(build + "\n\n")
	}
	b.WriteString("package " + pkgName + "\n\n")
	ps := make([]*pkg, 0, len(f.imports))
	for p := range f.imports {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].path < ps[j].path })
	if len(ps) > 0 {
		b.WriteString("import (\n")
		for _, p := range ps {
			if n := f.imports[p]; n != p.name {
				fmt.Fprintf(&b, "\t%s %q\n", n, p.path)
			} else {
				fmt.Fprintf(&b, "\t%q\n", p.path)
			}
		}
		b.WriteString(")\n\n")
	}
	b.WriteString(body)
	for _, u := range f.uses {
		b.WriteString(u + "\n")
	}
	return b.String()
}

// tparamNamesOf are the type parameter names declared in ifaces: no import
// of the file may take one, or the declaration would not see the package.
func tparamNamesOf(ifaces []*iface) []string {
	var out []string
	for _, in := range ifaces {
		for _, p := range in.tparams {
			out = append(out, p.name)
		}
	}
	return out
}

func (g *gen) write() (*Package, error) {
	out := &Package{Dir: g.dir, Files: map[string][]byte{}}
	add := func(name, src string) error {
		b, err := gofmt(name, src)
		if err != nil {
			return err
		}
		out.Files[name] = b
		return nil
	}
	reserved := map[string]bool{}
	for n := range g.reserved {
		reserved[n] = true
	}
	for _, t := range g.localTypes {
		reserved[t.name] = true
	}
	for _, in := range g.localIfaces {
		reserved[in.name] = true
	}
	for _, in := range g.annotated {
		reserved[in.name] = true
		out.Interfaces = append(out.Interfaces, in.name)
	}
	for _, jf := range g.funcs {
		reserved[jf.name] = true
	}

	// The package's files.
	names := []string{"a.go", "b.go", "c_test.go"}
	for i := 0; i <= g.files; i++ {
		var ifaces []*iface
		for _, in := range g.annotated {
			if in.file == i {
				ifaces = append(ifaces, in)
			}
		}
		if i == 0 {
			ifaces = append(slices.Clone(g.localIfaces), ifaces...)
		}
		f := g.newFile(g.local, false, reserved, tparamNamesOf(ifaces))
		var b strings.Builder
		if i == 0 {
			g.writeLocalDecls(f, &b)
		}
		g.writeIfaces(f, &b, ifaces)
		g.writeJudgeFuncs(f, &b, i)
		build := ""
		if i == 1 && g.seed%2 == 0 {
			build = "//go:build !fzoff"
		}
		if err := add(g.dir+"/"+names[i], f.finish(build, g.local.name, b.String())); err != nil {
			return nil, err
		}
	}

	// The other package of the module.
	if len(g.depTypes)+len(g.depIfaces)+len(g.depErrs) > 0 {
		f := g.newFile(g.dep, false, nil, tparamNamesOf(g.depIfaces))
		var b strings.Builder
		for _, t := range g.depTypes {
			b.WriteString(t.declare(f) + "\n\n")
		}
		for _, e := range g.depErrs {
			fmt.Fprintf(&b, "// %s is an error to exclude.\nvar %s = %sNew(%q)\n\n", e, e, f.qual(pErrors), strings.ToLower(e))
		}
		g.writeIfaces(f, &b, g.depIfaces)
		if err := add(g.depDir+"/dep.go", f.finish("", g.dep.name, b.String())); err != nil {
			return nil, err
		}
		if g.handle != nil {
			if err := add(g.depDir+"/internal/impl/impl.go", "package impl\n\n// Handle is a struct of an internal package.\ntype Handle struct{ N int }\n"); err != nil {
				return nil, err
			}
		}
	}

	// The forwarding test.
	f := g.newFile(g.local, true, reserved, nil)
	if err := add(g.dir+"/fz_test.go", f.finish("", g.local.name, g.testBody(f))); err != nil {
		return nil, err
	}
	return out, nil
}

func (g *gen) writeLocalDecls(f *file, b *strings.Builder) {
	if g.reserved["runtime"] {
		b.WriteString("// runtime is not the package.\nvar runtime = \"not the package\"\n\n")
	}
	if g.reserved["context"] {
		b.WriteString("const context = 1\n\n")
	}
	if g.reserved["errors"] {
		b.WriteString("var errors = 2\n\n")
	}
	if g.reserved["http"] {
		b.WriteString("func http() int { return 3 }\n\n")
	}
	for _, t := range g.localTypes {
		b.WriteString(t.declare(f) + "\n\n")
	}
	for _, e := range g.localErrs {
		fmt.Fprintf(b, "// %s is an error to exclude.\nvar %s = %sNew(%q)\n\n", e, e, f.qual(pErrors), strings.ToLower(e))
	}
}

func (g *gen) writeIfaces(f *file, b *strings.Builder, ifaces []*iface) {
	for i := 0; i < len(ifaces); i++ {
		in := ifaces[i]
		if in.form != formGroup {
			b.WriteString(f.ifaceDecl(in, false) + "\n")
			continue
		}
		b.WriteString("type (\n")
		for ; i < len(ifaces) && ifaces[i].form == formGroup; i++ {
			b.WriteString(f.ifaceDecl(ifaces[i], true) + "\n")
		}
		i--
		b.WriteString(")\n\n")
	}
}

func (f *file) line(l *line) string {
	var parts []string
	for _, o := range l.opts {
		switch {
		case o.refs != nil:
			var ids []string
			for _, r := range o.refs {
				q := f.qual(r.p)
				ids = append(ids, q+r.name)
				if q != "" {
					f.use(q + r.name)
				}
			}
			parts = append(parts, o.key+"="+strings.Join(ids, ","))
		case o.val == "":
			parts = append(parts, o.key)
		default:
			parts = append(parts, o.key+"="+o.val)
		}
	}
	return "//breaker:" + strings.Join(parts, " ")
}

func (f *file) ifaceDecl(in *iface, grouped bool) string {
	var b strings.Builder
	if in.lines != nil || in.pkg == f.g.local {
		fmt.Fprintf(&b, "// %s is an interface of the fuzzer.\n", in.name)
	}
	for _, l := range in.lines {
		b.WriteString(f.line(l) + "\n")
	}
	if !grouped {
		b.WriteString("type ")
	}
	b.WriteString(in.name)
	switch in.form {
	case formAlias:
		b.WriteString(" = " + f.ts(in.target) + "\n")
		return b.String()
	case formDefined:
		b.WriteString(" " + f.ts(in.target) + "\n")
		return b.String()
	}
	if len(in.tparams) > 0 {
		var ps []string
		for i, p := range in.tparams {
			ps = append(ps, p.name+" "+p.cons.src(f, in.tparams[:i]))
		}
		b.WriteString("[" + strings.Join(ps, ", ") + "]")
	}
	b.WriteString(" interface {\n")
	for _, e := range in.embeds {
		b.WriteString("\t" + f.ts(e) + "\n")
	}
	for _, m := range in.methods {
		if m.doc {
			fmt.Fprintf(&b, "\t// %s is a method.\n", m.name)
		}
		if m.line != nil {
			b.WriteString("\t" + f.line(m.line) + "\n")
		}
		b.WriteString("\t" + m.name + f.sig(m.ft, m.pnames, m.rnames) + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// vctx writes values for the test.
type vctx struct {
	f     *file
	count *int
	marks []int // the marks of the funcs written
}

func (v *vctx) n() int { *v.count++; return *v.count }

// val is a distinct value of t, which has no type parameters.
func (v *vctx) val(t typ) string {
	f := v.f
	switch t := t.(type) {
	case basicT:
		return basicVal(t.name, v.n())
	case namedT:
		if t.d.val != nil {
			return t.d.val(v, t.args)
		}
		if n, ok := unalias(t).(namedT); ok && n.d.val != nil {
			return n.d.val(v, n.args)
		}
		switch u := underlying(t).(type) {
		case structT:
			return f.ts(t) + "{" + v.fields(u) + "}"
		case funcT:
			return f.ts(t) + "(" + v.funcLit(u) + ")"
		case basicT:
			return f.ts(t) + "(" + basicVal(u.name, v.n()) + ")"
		default:
			return f.ts(t) + "(" + v.val(u) + ")"
		}
	case ptrT:
		v.n()
		return "new(" + f.ts(t.elem) + ")"
	case sliceT:
		k := 1 + v.n()%2
		var es []string
		for range k {
			es = append(es, v.val(t.elem))
		}
		return f.ts(t) + "{" + strings.Join(es, ", ") + "}"
	case arrayT:
		var es []string
		for range t.n {
			es = append(es, v.val(t.elem))
		}
		return f.ts(t) + "{" + strings.Join(es, ", ") + "}"
	case mapT:
		return f.ts(t) + "{" + v.val(t.key) + ": " + v.val(t.elem) + "}"
	case chanT:
		v.n()
		return "make(" + f.ts(chanT{both, t.elem}) + ")"
	case funcT:
		return v.funcLit(t)
	case structT:
		return f.ts(t) + "{" + v.fields(t) + "}"
	case litT:
		return fmt.Sprintf("%sNewReader(\"v%d\")", f.qual(pStrings), v.n())
	}
	panic(fmt.Sprintf("ifacegen: no value for %T", t))
}

func (v *vctx) fields(s structT) string {
	var parts []string
	for _, fl := range s.fields {
		parts = append(parts, fl.name+": "+v.val(fl.t))
	}
	return strings.Join(parts, ", ")
}

// funcLit is a func that sets fzMark to a mark of its own.
func (v *vctx) funcLit(ft funcT) string {
	m := v.n()
	v.marks = append(v.marks, m)
	body := fmt.Sprintf("fzMark = %d", m)
	if len(ft.results) > 0 {
		var zs []string
		for _, r := range ft.results {
			zs = append(zs, "*new("+v.f.ts(r)+")")
		}
		body += "; return " + strings.Join(zs, ", ")
	}
	return "func" + v.f.sig(ft, nil, nil) + " { " + body + " }"
}

// zeroArgs are arguments for a call of ft, the variadic ones left out.
func (f *file) zeroArgs(ft funcT) string {
	var zs []string
	for i, p := range ft.params {
		if ft.variadic && i == len(ft.params)-1 {
			break
		}
		zs = append(zs, "*new("+f.ts(p)+")")
	}
	return strings.Join(zs, ", ")
}

func sliceOfFunc(t typ) (funcT, bool) {
	s, ok := underlying(t).(sliceT)
	if !ok || !isFunc(s.elem) {
		return funcT{}, false
	}
	return funcOf(s.elem), true
}

// check writes the test that got is want: the same func (it sets the
// same mark), a context carrying the caller's value, a request equal but
// for its ctx, or fzSame (fzEqual when the wrapper could not have got want
// itself).
func (f *file) check(b *strings.Builder, t typ, want, got, what string, marks []int, ident bool) {
	if isFunc(t) {
		fmt.Fprintf(b, "if %s == nil {\nt.Errorf(%q)\n} else {\nfzMark = 0\n%s(%s)\nif fzMark != %d {\nt.Errorf(\"%s: got another func (it marks %%d, want %d)\", fzMark)\n}\n}\n",
			got, what+": got a nil func", got, f.zeroArgs(funcOf(t)), marks[0], what, marks[0])
		return
	}
	if ft, ok := sliceOfFunc(t); ok {
		fmt.Fprintf(b, "if len(%s) != %d {\nt.Errorf(\"%s: got %%d funcs, want %d\", len(%s))\n} else {\n", got, len(marks), what, len(marks), got)
		for i, m := range marks {
			fmt.Fprintf(b, "fzMark = 0\n%s[%d](%s)\nif fzMark != %d {\nt.Errorf(\"%s[%d]: got another func (it marks %%d, want %d)\", fzMark)\n}\n", got, i, f.zeroArgs(ft), m, what, i, m)
		}
		b.WriteString("}\n")
		return
	}
	if isContext(t) {
		fmt.Fprintf(b, "if fzCtxID(%s) != fzCtxID(%s) {\nt.Errorf(%q)\n}\n", got, want, what+": got a context without the caller's value")
		return
	}
	if p, ok := t.(ptrT); ok && ident {
		if n, ok := p.elem.(namedT); ok && n.d == stdRequest {
			// A method whose ctx comes from the request passes it on
			// with the timeout's ctx (SPEC §12): a copy, equal but for
			// its ctx.
			bg := f.qual(pContext) + "Background()"
			fmt.Fprintf(b, "if !fzSame(%[1]s, %[2]s) && (%[2]s == nil || !fzEqual(*%[1]s.WithContext(%[3]s), *%[2]s.WithContext(%[3]s))) {\nt.Errorf(\"%[4]s: got %%#v, want %%#v\", %[2]s, %[1]s)\n}\n", want, got, bg, what)
			return
		}
	}
	fn := "fzSame"
	if !ident {
		fn = "fzEqual"
	}
	fmt.Fprintf(b, "if !%s(%s, %s) {\nt.Errorf(\"%s: got %%#v, want %%#v\", %s, %s)\n}\n", fn, want, got, what, got, want)
}

func (g *gen) testBody(f *file) string {
	var b strings.Builder
	count := 0
	for _, in := range g.annotated {
		g.testIface(f, &b, in, &count)
	}
	T := f.qual(pTesting) + "T"
	rt := f.qual(pBGRun)
	fmt.Fprintf(&b, `// fzRegistry is a registry of the test's own.
func fzRegistry() *%[1]sRegistry {
	return %[1]sNewRegistry(%[1]sWithoutEnv(), %[1]sWithLogger(%[2]sNew(%[2]sDiscardHandler)))
}

// fzSame reports whether got is want itself: the same pointer, channel,
// map or slice, or a deeply equal value.
func fzSame(want, got any) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	wv, gv := %[3]sValueOf(want), %[3]sValueOf(got)
	if wv.Type() != gv.Type() {
		return false
	}
	switch wv.Kind() {
	case %[3]sPointer, %[3]sChan, %[3]sMap, %[3]sUnsafePointer:
		return wv.Pointer() == gv.Pointer()
	case %[3]sSlice:
		if wv.IsNil() != gv.IsNil() || wv.Len() != gv.Len() || wv.Len() > 0 && wv.Pointer() != gv.Pointer() {
			return false
		}
	}
	return %[3]sDeepEqual(want, got)
}

// fzEqual reports whether got and want are deeply equal.
func fzEqual(want, got any) bool { return %[3]sDeepEqual(want, got) }

type fzKey struct{}

// fzCtxID is the value the test put in a context.
func fzCtxID(ctx %[4]sContext) any {
	if ctx == nil {
		return nil
	}
	return ctx.Value(fzKey{})
}

// fzDirEntry is an os.DirEntry.
type fzDirEntry int

func (d fzDirEntry) Name() string               { return "" }
func (d fzDirEntry) IsDir() bool                { return false }
func (d fzDirEntry) Type() %[5]sFileMode        { return 0 }
func (d fzDirEntry) Info() (%[5]sFileInfo, error) { return nil, nil }

var _ = (*%[6]s)(nil)
`, rt, f.qual(pSlog), f.qual(pReflect), f.qual(pContext), f.qual(pFS), T)
	return b.String()
}

func (g *gen) testIface(f *file, b *strings.Builder, in *iface, count *int) {
	var args []typ
	for _, p := range in.tparams {
		args = append(args, p.conc)
	}
	targs := ""
	if len(args) > 0 {
		targs = "[" + f.tlist(args) + "]"
	}
	ms := in.methodSet(args)
	rec := "fzRec" + in.name
	fmt.Fprintf(b, "// %s records the calls of %s's methods and returns preset results.\ntype %s struct {\n", rec, in.name, rec)
	for _, m := range ms {
		fmt.Fprintf(b, "%s_n int\n", m.name)
		for i, p := range m.ft.params {
			fmt.Fprintf(b, "%s_p%d %s\n", m.name, i, f.ts(p))
		}
		for i, r := range m.ft.results {
			fmt.Fprintf(b, "%s_r%d %s\n", m.name, i, f.ts(r))
		}
	}
	b.WriteString("}\n\n")
	for _, m := range ms {
		var pn, rs []string
		for i := range m.ft.params {
			pn = append(pn, "p"+strconv.Itoa(i))
		}
		fmt.Fprintf(b, "func (r *%s) %s%s {\nr.%s_n++\n", rec, m.name, f.sig(m.ft, pn, nil), m.name)
		for i := range m.ft.params {
			fmt.Fprintf(b, "r.%s_p%d = p%d\n", m.name, i, i)
		}
		for i := range m.ft.results {
			rs = append(rs, fmt.Sprintf("r.%s_r%d", m.name, i))
		}
		if len(rs) > 0 {
			b.WriteString("return " + strings.Join(rs, ", ") + "\n")
		}
		b.WriteString("}\n\n")
	}
	fmt.Fprintf(b, "var _ %s%s = (*%s)(nil)\n\n", in.name, targs, rec)

	T := f.qual(pTesting) + "T"
	fmt.Fprintf(b, "// TestFz%s calls every method of %s through its wrapper and checks\n// that the arguments and results pass unchanged.\nfunc TestFz%s(t *%s) {\n", in.name, in.name, in.name, T)
	for _, m := range ms {
		g.testMethod(f, b, in, m, rec, "New"+in.name+"Breaker"+targs, m.name, false, count)
	}
	for _, m := range ms {
		g.testKeyTrip(f, b, in, m, rec, "New"+in.name+"Breaker"+targs, count)
	}
	if g.chains(in) {
		for _, m := range ms {
			g.testMethod(f, b, in, m, rec, "New"+in.name+"Chain"+targs, "Chain"+m.name, true, count)
		}
	}
	b.WriteString("}\n\n")
}

// testMethod writes the subtest that calls m, a method of in, through the
// wrapper ctor makes, with distinct values, and checks what the recorder
// got and what came back. Through a chain, whose primary's failure becomes
// a ChainError, and on a route that retries, which would try again, the
// recorder's errors are nil. A route with a valid or failure func must
// call it when the upstream answered without an error.
func (g *gen) testMethod(f *file, b *strings.Builder, in *iface, m *method, rec, ctor, name string, chain bool, count *int) {
	T := f.qual(pTesting) + "T"
	v := &vctx{f: f, count: count}
	ki, kind := g.keyOf(in, m)
	reg := "fzRegistry()"
	if ki >= 0 {
		reg = "reg"
	}
	fmt.Fprintf(b, "t.Run(%q, func(t *%s) {\nvar fzMark int\n_ = fzMark\nrec := &%s{}\n", name, T, rec)
	if ki >= 0 {
		b.WriteString("reg := fzRegistry()\n")
	}
	fmt.Fprintf(b, "w := %s(rec, %s)\n", ctor, reg)
	var call []string
	type chk struct {
		t         typ
		want, got string
		what      string
		marks     []int
		ident     bool // got must be want itself, not only equal
	}
	var chks []chk
	for i, p := range m.ft.params {
		v.marks = nil
		got := fmt.Sprintf("rec.%s_p%d", m.name, i)
		what := fmt.Sprintf("%s: argument %d", m.name, i)
		if m.ft.variadic && i == len(m.ft.params)-1 && g.chance(0.5) {
			// One by one: the wrapper gets a slice of its own.
			elem := p.(sliceT).elem
			var names []string
			for k := range g.intn(3) {
				a := fmt.Sprintf("a%d_%d", i, k)
				fmt.Fprintf(b, "var %s %s = %s\n", a, f.ts(elem), v.val(elem))
				names = append(names, a)
				call = append(call, a)
			}
			want := f.ts(p) + "(nil)"
			if len(names) > 0 {
				want = f.ts(p) + "{" + strings.Join(names, ", ") + "}"
			}
			chks = append(chks, chk{p, want, got, what, v.marks, false})
			continue
		}
		a := fmt.Sprintf("a%d", i)
		fmt.Fprintf(b, "var %s %s = %s\n", a, f.ts(p), v.val(p))
		if m.ft.variadic && i == len(m.ft.params)-1 {
			call = append(call, a+"...")
		} else {
			call = append(call, a)
		}
		chks = append(chks, chk{p, a, got, what, v.marks, true})
	}
	var gots []string
	checkJudge := g.judges(in, m)
	retries := g.retries(in, m)
	for i, r := range m.ft.results {
		v.marks = nil
		val := ""
		if n, ok := r.(namedT); ok && n.d == stdError && (chain || retries || g.chance(0.3)) {
			val = "nil"
		} else {
			val = v.val(r)
			if n, ok := r.(namedT); ok && n.d == stdError && i == len(m.ft.results)-1 {
				checkJudge = false // an answer with an error is not judged
			}
		}
		fmt.Fprintf(b, "var r%d %s = %s\nrec.%s_r%d = r%d\n", i, f.ts(r), val, m.name, i, i)
		gots = append(gots, fmt.Sprintf("g%d", i))
		chks = append(chks, chk{r, fmt.Sprintf("r%d", i), fmt.Sprintf("g%d", i), fmt.Sprintf("%s: result %d", m.name, i), v.marks, true})
	}
	callExpr := fmt.Sprintf("w.%s(%s)", m.name, strings.Join(call, ", "))
	if len(gots) > 0 {
		callExpr = strings.Join(gots, ", ") + " := " + callExpr
	}
	if checkJudge {
		b.WriteString("fzJ := fzJudged\n")
	}
	fmt.Fprintf(b, "%s\nif rec.%s_n != 1 {\nt.Fatalf(\"%s was called %%d times, want once\", rec.%s_n)\n}\n", callExpr, m.name, m.name, m.name)
	if checkJudge {
		fmt.Fprintf(b, "if fzJudged == fzJ {\nt.Errorf(%q)\n}\n", m.name+": the answer came without an error, but its valid or failure func was not called")
	}
	for _, c := range chks {
		f.check(b, c.t, c.want, c.got, c.what, c.marks, c.ident)
	}
	if ki >= 0 {
		// The key's own breaker, "<name>/<value>" (SPEC §15).
		key := fmt.Sprintf("%q + %s", in.routeName(m.name)+"/", f.keyText(kind, fmt.Sprintf("a%d", ki)))
		fmt.Fprintf(b, "if _, ok := reg.Lookup(%s); !ok {\nt.Errorf(\"%s: no breaker %%q for the key in the registry\", %s)\n}\n", key, m.name, key)
	}
	b.WriteString("})\n")
}

// testKeyTrip writes, for m, a method of in whose route is keyed by a
// name drawn for it (keyFam.threshold), the subtest where one key's
// failures trip its breaker and not another key's; the other key's
// failures then trip it too, or, under maxopen (below 100%% of two live
// keys: one), leave it CLOSED.
func (g *gen) testKeyTrip(f *file, b *strings.Builder, in *iface, m *method, rec, ctor string, count *int) {
	ki, _ := g.keyOf(in, m)
	if ki < 0 || !errLast(m) || g.retries(in, m) || g.effective(in, m, "stale") != "" {
		return
	}
	fam := g.keyFams[in.routeName(m.name)]
	if fam == nil || fam.threshold == 0 {
		return
	}
	n := fam.threshold
	v := &vctx{f: f, count: count}
	fmt.Fprintf(b, "t.Run(%q, func(t *%s) {\nvar fzMark int\n_ = fzMark\nrec := &%s{}\nw := %s(rec, fzRegistry())\n", "Keys"+m.name, f.qual(pTesting)+"T", rec, ctor)
	fmt.Fprintf(b, "rec.%s_r%d = %sNew(\"fzfail\")\n", m.name, len(m.ft.results)-1, f.qual(pErrors))
	var args []string
	for i, p := range m.ft.params {
		a := fmt.Sprintf("a%d", i)
		switch {
		case i == ki:
			fmt.Fprintf(b, "kA, kB := %s(%s), %s(%s)\n", f.ts(p), v.val(p), f.ts(p), v.val(p))
			a = "%[1]s"
		case m.ft.variadic && i == len(m.ft.params)-1:
			fmt.Fprintf(b, "var %s %s = %s\n", a, f.ts(p), v.val(p))
			a += "..."
		default:
			fmt.Fprintf(b, "var %s %s = %s\n", a, f.ts(p), v.val(p))
		}
		args = append(args, a)
	}
	call := func(k string) string {
		return fmt.Sprintf("w.%s(%s)\n", m.name, fmt.Sprintf(strings.Join(args, ", "), k))
	}
	calls := func(k string, times int) {
		if times == 1 {
			b.WriteString(call(k))
		} else if times > 1 {
			fmt.Fprintf(b, "for range %d {\n%s}\n", times, call(k))
		}
	}
	calls("kA", n)
	fmt.Fprintf(b, "if rec.%[1]s_n != %[2]d {\nt.Fatalf(\"%[1]s was called %%d times, want %[2]d\", rec.%[1]s_n)\n}\n", m.name, n)
	calls("kA", 1)
	fmt.Fprintf(b, "if rec.%[1]s_n != %[2]d {\nt.Errorf(\"%[1]s: key %%v failed %[2]d times (threshold %[2]d), but its breaker let another call through\", kA)\n}\n", m.name, n)
	calls("kB", 1)
	fmt.Fprintf(b, "if rec.%[1]s_n != %[2]d {\nt.Fatalf(\"%[1]s: key %%v was refused: the failures of key %%v tripped its breaker\", kB, kA)\n}\n", m.name, n+1)
	calls("kB", n)
	if fam.maxopen > 0 {
		fmt.Fprintf(b, "if rec.%[1]s_n != %[2]d {\nt.Errorf(\"%[1]s: key %%v failed %[3]d times and was refused, but maxopen=%[4]d%%%% allows one of two keys OPEN\", kB)\n}\n", m.name, 2*n+1, n, fam.maxopen)
	} else {
		fmt.Fprintf(b, "if rec.%[1]s_n != %[2]d {\nt.Errorf(\"%[1]s: key %%v failed %[2]d times (threshold %[2]d), but its breaker let another call through\", kB)\n}\n", m.name, 2*n)
	}
	b.WriteString("})\n")
}
