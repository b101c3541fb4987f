package model

import (
	"bytes"
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
)

// iface models one annotated interface declared in src, in the steps a
// reader would name: check that it can be wrapped, name what is generated
// for it, route its lines, route its methods, name the wrapper's fields,
// and place it in its output file (only when emit: a -type run models
// every annotated interface but emits only the selected ones).
func (b *builder) iface(p *packages.Package, f *ast.File, src string, ts *ast.TypeSpec, lines []*annotation.Line, mlines map[string]*annotation.Line, emit bool) {
	in, it := b.checkType(p, ts)
	if in == nil {
		return
	}
	in.Chain = slices.ContainsFunc(lines, func(l *annotation.Line) bool { return l.Has("chain") })
	if !b.reserveNames(in, p) {
		return
	}
	methods, ok := b.checkMethods(in, it, mlines, p)
	if !ok {
		return
	}
	b.embeddedLines(in, ts, methods, lines)
	rs := resolver{scope: fileScope(p, f), pkg: p.Types}
	ils := b.routeLines(in, lines, methods, rs)
	b.chainBodies, b.chainHTTP = nil, false
	for _, m := range methods {
		b.routeMethod(in, m, ils, mlines[m.Name()], rs, src)
	}
	b.sharedNameKeys(in, mlines)
	b.idleBackoff(in)
	b.chainReaders(in)
	b.answerRoutes(in)
	if !in.Chain {
		b.hedgeNeedsChain(in, lines, mlines)
	}
	b.unjudgedResponses(in, mlines)
	slices.SortStableFunc(in.Routes, func(x, y *Route) int { return cmp.Compare(x.order, y.order) })
	b.families(in)
	b.ifaces = append(b.ifaces, &modelled{in: in, ils: ils, pkg: p.Types.Path(), own: ownMethods(ts)})
	b.fieldNames(in)
	if emit {
		b.place(in, p.Types, f, src)
	}
}

// eofAnswer is io.EOF, the answer of a reader at the end of its data.
var eofAnswer = Answer{Ref: Ref{Path: "io", Name: "EOF", Text: "io.EOF"}, What: "the end of the data"}

// readsToEOF reports whether m is a read of package io's shapes, whose
// io.EOF is the end of the data, not a failure: Read(p []byte) (n int,
// err error), ReadAt(p []byte, off int64), ReadByte() (byte, error) and
// ReadRune() (rune, int, error); bufio's ReadString(delim byte) (string,
// error) and ReadBytes(delim byte) ([]byte, error); a gRPC stream's
// Recv() (T, error). An interface embedding io.Reader (an
// io.ReadCloser of a download, say) tripped its breaker after five reads
// to the end.
func readsToEOF(m *Method) bool {
	sig := m.Sig
	params, res := sig.Params(), sig.Results()
	if sig.Variadic() || res.Len() < 2 || !types.Identical(res.At(res.Len()-1).Type(), types.Universe.Lookup("error").Type()) {
		return false
	}
	basic := func(t types.Type, k types.BasicKind) bool {
		b, ok := t.(*types.Basic)
		return ok && b.Kind() == k
	}
	bytes := func(t types.Type) bool {
		sl, ok := t.(*types.Slice)
		return ok && basic(sl.Elem(), types.Byte)
	}
	switch {
	case m.Name == "Read" && params.Len() == 1 && res.Len() == 2:
		return bytes(params.At(0).Type()) && basic(res.At(0).Type(), types.Int)
	case m.Name == "ReadAt" && params.Len() == 2 && res.Len() == 2:
		return bytes(params.At(0).Type()) && basic(params.At(1).Type(), types.Int64) && basic(res.At(0).Type(), types.Int)
	case m.Name == "ReadByte" && params.Len() == 0 && res.Len() == 2:
		return basic(res.At(0).Type(), types.Byte)
	case m.Name == "ReadRune" && params.Len() == 0 && res.Len() == 3:
		return basic(res.At(0).Type(), types.Rune) && basic(res.At(1).Type(), types.Int)
	case (m.Name == "ReadString" || m.Name == "ReadBytes") && params.Len() == 1 && res.Len() == 2:
		// bufio.Reader's: the data before the end, then io.EOF.
		return basic(params.At(0).Type(), types.Byte) && (m.Name == "ReadString" && basic(res.At(0).Type(), types.String) || m.Name == "ReadBytes" && bytes(res.At(0).Type()))
	case m.Name == "Recv" && params.Len() == 0 && res.Len() == 2:
		// A gRPC stream's (grpc.ServerStreamingClient[T]): io.EOF once
		// the server has sent its last message. answerRoutes takes it
		// of a stream's interface alone.
		return true
	}
	return false
}

// answerRoutes makes the route of each guarded method of in that has a
// plain error result and is a known client's (Method.Answers) exclude
// the client's answers, as if its line's exclude named them too (an
// exclude that names one already keeps it once): the route itself when
// each method it guards is the client's, when it is the method's own
// line's, or when it is keyed (a family of breakers is made with one
// line's settings); otherwise a route of the same line and breaker, for
// those methods alone, so that the line's other methods keep their
// errors failures.
func (b *builder) answerRoutes(in *Interface) {
	// The route for the client's methods, by the line's and the answers
	// it excludes besides: methods of two clients on one line get one
	// each.
	type derivedKey struct {
		r       *Route
		answers string
	}
	derived := map[derivedKey]*Route{}
	// A transaction's Commit() error and Rollback() error spell no type of
	// database/sql's, but are its own in an interface whose other methods
	// spell one (a *sql.Tx's ExecContext beside them).
	endsTx := func(m *Method) bool {
		return (m.Name == "Commit" || m.Name == "Rollback") && m.Sig.Params().Len() == 0 &&
			m.Sig.Results().Len() == 1 && types.Identical(m.Sig.Results().At(0).Type(), types.Universe.Lookup("error").Type())
	}
	var sqlPkg *types.Package
	for _, m := range in.Methods {
		for _, p := range clientPackages(m.Sig) {
			if p.Path() == "database/sql" {
				sqlPkg = p
			}
		}
	}
	tx := sqlPkg != nil && slices.ContainsFunc(in.Methods, endsTx)
	// A gRPC stream's Recv answers io.EOF after the last message; another
	// Recv (a queue's, say) may mean a connection lost by it. A stream is
	// a client's: it has CloseSend() error, as grpc.ClientStream.
	stream := slices.ContainsFunc(in.Methods, func(m *Method) bool {
		return m.Name == "CloseSend" && m.Sig.Params().Len() == 0 && m.Sig.Results().Len() == 1 &&
			types.Identical(m.Sig.Results().At(0).Type(), types.Universe.Lookup("error").Type())
	})
	// answersOf is a method's answers: those of every known client whose
	// types its signature spells; a transaction's Commit and Rollback are
	// database/sql's. A method with none is not a client's: a route of
	// the line that also guards such a method stays as it is, and the
	// client's methods get one of their own (below).
	answersOf := func(m *Method) []Answer {
		pkgs := clientPackages(m.Sig)
		if tx && endsTx(m) && !slices.Contains(pkgs, sqlPkg) {
			pkgs = append(pkgs, sqlPkg)
		}
		out := clientAnswers(pkgs, tx)
		if readsToEOF(m) && (m.Name != "Recv" || stream) {
			out = append(out, eofAnswer)
		}
		return out
	}
	for _, m := range in.Methods {
		if m.Route == nil || m.Carrier != nil {
			continue
		}
		m.Answers = answersOf(m)
		m.Commands = commandsResult(m.Sig)
		r := m.Route
		var missing []Ref
		for _, a := range m.Answers {
			if !slices.ContainsFunc(r.Exclude, func(e Ref) bool { return e.Path == a.Path && e.Name == a.Name }) {
				missing = append(missing, a.Ref)
			}
		}
		var set []string
		for _, a := range missing {
			set = append(set, a.Path+"."+a.Name)
		}
		dk := derivedKey{r, strings.Join(set, " ")}
		switch {
		case len(missing) == 0:
		case derived[dk] != nil:
			m.Route = derived[dk]
		case r.Method != "" || r.KeyParam != "" || !slices.ContainsFunc(in.Methods, func(o *Method) bool { return o.Route == r && len(answersOf(o)) == 0 }):
			r.Exclude = slices.Concat(r.Exclude, missing)
		default:
			d := *r
			d.Exclude = slices.Concat(r.Exclude, missing)
			derived[dk] = &d
			b.routes = append(b.routes, &d)
			in.Routes = append(in.Routes, &d)
			m.Route = &d
		}
	}
}

// unjudgedResponses warns, once for in, of its guarded methods that
// return a *http.Response that no failure func judges: an answer of
// status 503 or 429 is then a success, and the breaker opens only on
// transport errors, which is rarely what the user believes. A method's
// own line with failure=- says it is meant.
func (b *builder) unjudgedResponses(in *Interface, mlines map[string]*annotation.Line) {
	var names []string
	for _, m := range in.Methods {
		if m.Route == nil || m.Response == 0 || m.Route.Failure != nil || m.Route.failOpt != nil {
			continue
		}
		if ml := mlines[m.Name]; ml != nil && ml.Has("failure") {
			continue
		}
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return
	}
	list := strings.Join(names[:min(len(names), 3)], ", ")
	if len(names) > 3 {
		list += fmt.Sprintf(" and %d more", len(names)-3)
	}
	verb := "returns"
	if len(names) > 1 {
		verb = "return"
	}
	b.warnf(in.Pos, "%s: %s %s a *http.Response that no failure= judges, so an answer of status 5xx or 429 counts as a success and the breaker opens only on transport errors; give the line failure=httpguard.Failure (the file imports github.com/breakergen/breakergen/runtime/httpguard, with var _ = httpguard.Failure if nothing else uses it), or a method's own line failure=- to mean it", in.Name, list, verb)
}

// embeddedLines warns of each method that in embeds from an interface
// where the method has a //breaker: line of its own: only methods written
// in in's literal read their lines, so that line does not apply to in's
// wrapper (its retries, key or timeout would be lost without a word). A
// method a line of in names in methods= (by its name, not a pattern) is
// routed on purpose.
func (b *builder) embeddedLines(in *Interface, ts *ast.TypeSpec, methods []*types.Func, lines []*annotation.Line) {
	own := ownMethods(ts)
	named := map[string]bool{} // methods a line of in names in its methods=: routed on purpose
	for _, l := range lines {
		if o, ok := l.Get("methods"); ok {
			for _, n := range o.Value.List {
				named[n] = true
			}
		}
	}
	for _, m := range methods {
		if own[m.Name()] || named[m.Name()] {
			continue
		}
		if at, ok := b.lineAbove(b.fset.Position(m.Pos())); ok {
			b.warnf(in.Pos, "%s.%s: the //breaker: line on the embedded method at %s does not apply to %s: an embedded method is routed by the embedding interface's own lines; declare %s in %s with its line (the same signature may be declared beside the embedding), or route it from a line with methods=%s", in.Name, m.Name(), at, in.Name, m.Name(), in.Name, m.Name())
		}
	}
}

// lineAbove reports whether the comment lines right above pos, in its file
// on disk, hold a //breaker: line, and where.
func (b *builder) lineAbove(pos token.Position) (token.Position, bool) {
	if !pos.IsValid() || pos.Line < 2 {
		return token.Position{}, false
	}
	lines, ok := b.sources[pos.Filename]
	if !ok {
		if data, err := os.ReadFile(pos.Filename); err == nil {
			lines = strings.Split(string(data), "\n")
		}
		b.sources[pos.Filename] = lines
	}
	for i := pos.Line - 2; i >= 0 && i < len(lines); i-- {
		t := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(t, "//") {
			break
		}
		if strings.HasPrefix(t, annotation.Prefix) {
			return token.Position{Filename: pos.Filename, Line: i + 1, Column: strings.Index(lines[i], "//") + 1}, true
		}
	}
	return token.Position{}, false
}

// checkType checks that the declaration is a package-level interface that
// can be wrapped, and returns its model (names, type parameters) and its
// underlying interface; nil when it cannot be wrapped.
func (b *builder) checkType(p *packages.Package, ts *ast.TypeSpec) (*Interface, *types.Interface) {
	pos := b.fset.Position(ts.Name.Pos())
	name := ts.Name.Name
	obj, _ := p.TypesInfo.Defs[ts.Name].(*types.TypeName)
	if obj == nil {
		b.errorf(pos, "%s: no type information (see the package's errors)", name)
		return nil, nil
	}
	// Type errors inside the declaration stop it; others do not. An error
	// of two lines (S redeclared, and where the other declaration is)
	// counts when either line is inside it, and is reported whole.
	start, end := b.fset.Position(ts.Pos()), b.fset.Position(ts.End())
	inside := func(l *annotation.Error) bool {
		return l.Pos.Filename == start.Filename && l.Pos.Line >= start.Line && l.Pos.Line <= end.Line
	}
	bad := false
	for _, te := range typeErrors(p) {
		if slices.ContainsFunc(te, inside) {
			e := joinTypeError(te)
			e.Msg += generatedHint(p.Types, e.Msg)
			b.run.Errors = append(b.run.Errors, e)
			bad = true
		}
	}
	if bad {
		return nil, nil
	}
	it, ok := types.Unalias(obj.Type()).Underlying().(*types.Interface)
	switch {
	case !ok:
		hint := ""
		if _, isStruct := types.Unalias(obj.Type()).Underlying().(*types.Struct); isStruct {
			// The usual mistake: the client type itself annotated.
			hint = fmt.Sprintf("; declare an interface of the %s methods your code calls (type %sAPI interface { ... }), annotate it, and wrap a *%s with the constructor generated for it", name, name, name)
		}
		b.errorf(pos, "%s is not an interface: //breaker: annotates interfaces only%s", name, hint)
		return nil, nil
	case !it.IsMethodSet():
		b.errorf(pos, "%s is a constraint interface (it has a type set), not a method set: it cannot be wrapped", name)
		return nil, nil
	}
	if a, ok := obj.Type().(*types.Alias); ok && a.TypeParams().Len() > 0 {
		b.errorf(pos, "%s is a generic alias: %s", name, genericAliasFix(a, obj.Pkg(), fileQualifier(p, ts)))
		return nil, nil
	}
	in := &Interface{
		Name:      name,
		Wrapper:   name + "Breaker",
		Ctor:      "New" + name + "Breaker",
		ChainType: name + "Chain",
		ChainCtor: "New" + name + "Chain",
		Obj:       obj,
		Pos:       pos,
	}
	if !ast.IsExported(name) {
		in.Wrapper, in.Ctor = lowerFirst(name)+"Breaker", "new"+upperFirst(name)+"Breaker"
		in.ChainType, in.ChainCtor = lowerFirst(name)+"Chain", "new"+upperFirst(name)+"Chain"
	}
	if n, ok := obj.Type().(*types.Named); ok && n.TypeParams().Len() > 0 {
		in.TypeParams = n.TypeParams()
	}
	return in, it
}

// generatedHint says why msg, a type error, names something undefined
// when it is what breakergen generates for an interface of pkg (its
// wrapper or chain type, or their constructors): the type checker reads
// the package without breakergen's outputs, so that they never stop a
// run, and an annotated interface that uses one cannot be generated. ""
// for any other error.
func generatedHint(pkg *types.Package, msg string) string {
	name, ok := strings.CutPrefix(msg, "undefined: ")
	if !ok || pkg == nil || strings.ContainsAny(name, " .\n") {
		return ""
	}
	// A wrapper or chain type (ABreaker, aBreaker) or its constructor
	// (NewABreaker, newABreaker); an interface may itself start with New.
	for _, base := range []string{name, strings.TrimPrefix(strings.TrimPrefix(name, "New"), "new")} {
		for _, suffix := range []string{"Breaker", "Chain"} {
			iface, ok := strings.CutSuffix(base, suffix)
			if !ok || iface == "" {
				continue
			}
			for _, n := range []string{iface, lowerFirst(iface)} {
				if tn, ok := pkg.Scope().Lookup(n).(*types.TypeName); ok && types.IsInterface(tn.Type()) {
					return fmt.Sprintf(" (%s is breakergen's output for %s, which it reads the package without: an annotated interface cannot use what breakergen generates; use %s itself, or declare this interface in another package)", name, n, n)
				}
			}
		}
	}
	return ""
}

// typeErrors returns p's type errors, each with its continuation lines:
// go/types reports the second line of an error ("\tother declaration of
// S", after "S redeclared in this block") as an error of its own, right
// after the first, its message indented with a tab.
func typeErrors(p *packages.Package) []typeError {
	var errs []typeError
	for _, e := range p.Errors {
		if e.Kind != packages.TypeError {
			continue
		}
		line := &annotation.Error{Pos: parsePos(e.Pos), Msg: e.Msg}
		if n := len(errs); n > 0 && strings.HasPrefix(e.Msg, "\t") {
			errs[n-1] = append(errs[n-1], line)
			continue
		}
		errs = append(errs, typeError{line})
	}
	return errs
}

// typeError is a type error's lines, the main one first.
type typeError []*annotation.Error

// joinTypeError makes te one error at its main line, its continuation
// lines under it as the go command prints them: a tab, the position, the
// message.
func joinTypeError(te typeError) *annotation.Error {
	var msg strings.Builder
	msg.WriteString(te[0].Msg)
	for _, l := range te[1:] {
		msg.WriteString("\n\t")
		if l.Pos.IsValid() {
			msg.WriteString(l.Pos.String() + ": ")
		}
		msg.WriteString(strings.TrimPrefix(l.Msg, "\t"))
	}
	return &annotation.Error{Pos: te[0].Pos, Msg: msg.String()}
}

// genericAliasFix says what to annotate instead of the generic alias a,
// declared in pkg: the interface it stands for when pkg declares it;
// otherwise (another package's, or an interface literal) a generic
// interface of a's name and type parameters that embeds the target, or
// is the literal, which generates as any interface does.
func genericAliasFix(a *types.Alias, pkg *types.Package, qual types.Qualifier) string {
	rhs := a.Rhs()
	// Through aliases: an alias of this package's alias of another
	// package's interface has no interface here to annotate.
	if obj := TypeName(types.Unalias(rhs)); obj != nil && obj.Pkg() == pkg {
		return "annotate the interface it stands for"
	}
	var tps []string
	for tp := range a.TypeParams().TypeParams() {
		tps = append(tps, tp.Obj().Name()+" "+types.TypeString(tp.Constraint(), qual))
	}
	decl := "type " + a.Obj().Name() + "[" + strings.Join(tps, ", ") + "] "
	if _, lit := rhs.(*types.Interface); lit {
		return "declare it as a generic interface instead, and annotate that: " + decl + types.TypeString(rhs, qual)
	}
	return "its interface is declared in another package, so declare " + a.Obj().Name() + " as a generic interface that embeds it instead, and annotate that: " + decl + "interface{ " + types.TypeString(rhs, qual) + " }"
}

// fileQualifier names packages as the file declaring ts imports them (an
// import's own name, else the package's), so that code suggested in a
// message can be pasted into that file.
func fileQualifier(p *packages.Package, ts *ast.TypeSpec) types.Qualifier {
	names := map[string]string{}
	for _, f := range p.Syntax {
		if f.Pos() > ts.Pos() || ts.End() > f.End() {
			continue
		}
		for _, imp := range f.Imports {
			if imp.Name != nil {
				if path, err := strconv.Unquote(imp.Path.Value); err == nil {
					names[path] = imp.Name.Name
				}
			}
		}
	}
	return func(q *types.Package) string {
		if q == p.Types {
			return ""
		}
		if n, ok := names[q.Path()]; ok {
			return n
		}
		return q.Name()
	}
}

// reserveNames claims the package-level names generated for in (the
// chain's only with the chain flag), which p will hold: each must be free
// in p, in p's in-package test files (which share its scope when its tests
// are built; see declared), and not generated for another interface.
func (b *builder) reserveNames(in *Interface, p *packages.Package) bool {
	ids := []string{in.Wrapper, in.Ctor}
	if in.Chain {
		ids = append(ids, in.ChainType, in.ChainCtor)
	}
	gen := b.generated[p.Types.Path()]
	if gen == nil {
		gen = map[string]token.Position{}
		b.generated[p.Types.Path()] = gen
	}
	for _, id := range ids {
		if at, ok := b.declared(p, id); ok {
			hint := ""
			if out := load.OutputOf(in.Pos.Filename); sameFile(at.Filename, out) {
				// Its own output, with the header edited away: breakergen
				// overwrites only what carries it.
				hint = fmt.Sprintf(" (%s is where %s's wrappers go, but it does not start with breakergen's header, %q, so breakergen took it for a file of yours: restore the header, or delete the file to have it written again)",
					filepath.Base(out), in.Name, load.Header)
			}
			b.errorf(in.Pos, "%s: cannot generate %s: the package already declares it at %s%s", in.Name, id, at, hint)
			return false
		}
		if prev, ok := gen[id]; ok {
			b.errorf(in.Pos, "%s: cannot generate %s: it is also generated for the interface at %s", in.Name, id, prev)
			return false
		}
	}
	for _, id := range ids {
		gen[id] = in.Pos
	}
	return true
}

// declared returns where p declares the package-level name id, other than
// in one of our outputs (emptied for the load), and whether it does. Its
// in-package test files count: when p's tests are built they share its
// scope, so a name one of them declares breaks go test and go vet. They
// are in p's test variant when the run loaded tests; otherwise their
// top-level names are parsed for the purpose (see testFileDecl). An
// external test package (package p_test) has a scope of its own.
func (b *builder) declared(p *packages.Package, id string) (token.Position, bool) {
	scopes := []*types.Package{p.Types}
	if tv := b.testVariants[p.Types.Path()]; tv != nil {
		scopes = append(scopes, tv.Types)
	}
	for _, pkg := range scopes {
		if o := pkg.Scope().Lookup(id); o != nil {
			if at := b.fset.Position(o.Pos()); !b.outputs[at.Filename] {
				return at, true
			}
		}
	}
	if b.testVariants[p.Types.Path()] != nil || p.ForTest != "" || strings.HasSuffix(p.Types.Path(), "_test") {
		// Loaded with its tests, or a test package itself: its scope above
		// holds what its test files declare, as the go command builds them.
		return token.Position{}, false
	}
	return b.testFileDecl(p, id)
}

// testFile is an in-package test file of a package loaded without its
// tests: its source, and once a name was looked for in it, the top-level
// names it declares.
type testFile struct {
	name  string
	src   []byte
	decls map[string]token.Position // nil until parsed
}

// testFileDecl reports whether an in-package test file of p, a package
// loaded without its tests, declares id at its top level, and where: the
// _test.go files of p's directory that the go command builds (not those
// p.IgnoredFiles lists for their build constraints, nor those whose name
// starts with _ or ., which it never reads) and whose package clause is
// p's. A file is parsed (syntax only, no type checking) only when its
// source holds id, so that a package of large mocks costs a read of them
// and no parse. Cached by package and by file.
func (b *builder) testFileDecl(p *packages.Package, id string) (token.Position, bool) {
	files, ok := b.testDecls[p.ID]
	if !ok {
		files = b.testFiles(p)
		b.testDecls[p.ID] = files
	}
	for _, f := range files {
		if !bytes.Contains(f.src, []byte(id)) {
			continue
		}
		if f.decls == nil {
			f.decls = map[string]token.Position{}
			fset := token.NewFileSet()
			// A file that does not parse gives what parsed.
			if af, _ := parser.ParseFile(fset, f.name, f.src, parser.SkipObjectResolution); af != nil && af.Name != nil && af.Name.Name == p.Name {
				for _, n := range topLevelNames(af) {
					if _, ok := f.decls[n.Name]; !ok {
						f.decls[n.Name] = fset.Position(n.Pos())
					}
				}
			}
		}
		if at, ok := f.decls[id]; ok {
			return at, true
		}
	}
	return token.Position{}, false
}

// testFiles reads the in-package test files testFileDecl looks in.
func (b *builder) testFiles(p *packages.Package) []*testFile {
	if p.Dir == "" {
		return nil
	}
	names, _ := filepath.Glob(filepath.Join(p.Dir, "*_test.go"))
	var files []*testFile
	for _, name := range names {
		if base := filepath.Base(name); strings.HasPrefix(base, "_") || strings.HasPrefix(base, ".") ||
			b.outputs[name] || slices.Contains(p.IgnoredFiles, name) {
			continue
		}
		if src, err := os.ReadFile(name); err == nil {
			files = append(files, &testFile{name: name, src: src})
		}
	}
	return files
}

// topLevelNames returns the identifiers f declares in its package's
// scope: its types, functions (not methods, nor init), variables and
// constants, blank ones left out.
func topLevelNames(f *ast.File) []*ast.Ident {
	var ids []*ast.Ident
	add := func(id *ast.Ident) {
		if id != nil && id.Name != "_" {
			ids = append(ids, id)
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "init" {
				add(d.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					add(s.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n)
					}
				}
			}
		}
	}
	return ids
}

// checkMethods returns the method set of it in name order, and whether a
// wrapper can implement it: every method is implementable outside its
// package and spells only types the wrapper can name, and every method
// line annotates a method of the set.
func (b *builder) checkMethods(in *Interface, it *types.Interface, mlines map[string]*annotation.Line, p *packages.Package) ([]*types.Func, bool) {
	pkg := p.Types
	var methods []*types.Func
	for m := range it.Methods() {
		methods = append(methods, m)
	}
	slices.SortFunc(methods, func(x, y *types.Func) int { return cmp.Compare(x.Name(), y.Name()) })
	ok := true
	for _, m := range methods {
		if !m.Exported() && m.Pkg() != pkg {
			b.errorf(in.Pos, "%s: method %s comes from package %s, where it is unexported: no type outside that package can implement it", in.Name, m.Name(), m.Pkg().Path())
			ok = false
			continue
		}
		if bad := foreignUnexported(m.Type(), pkg); bad != "" {
			b.errorf(in.Pos, "%s: method %s uses %s, which is unexported in its package: the wrapper cannot name it", in.Name, m.Name(), bad)
			ok = false
		} else if bad := foreignInternal(m.Type(), pkg); bad != "" {
			b.errorf(in.Pos, "%s: method %s uses %s, of an internal package that %s may not import: the wrapper cannot name it; declare %s in %s itself, spelling the type through an exported alias of it, or annotate a narrower interface without it", in.Name, m.Name(), bad, pkg.Path(), m.Name(), in.Name)
			ok = false
		}
		if invalid(m.Type()) {
			b.errorf(in.Pos, "%s: method %s has an invalid type; %s", in.Name, m.Name(), b.invalidWhy(m, p))
			ok = false
		}
	}
	for mname, l := range mlines {
		if !slices.ContainsFunc(methods, func(m *types.Func) bool { return m.Name() == mname }) {
			b.errorf(l.Pos, "%s: method %s not found in the method set", in.Name, mname)
			ok = false
		}
	}
	return methods, ok
}

// ifaceLine is one of the interface's lines with its route.
type ifaceLine struct {
	l     *annotation.Line
	route *Route
	globs []string // the methods patterns; nil on the default line
}

// ifaceLines are the interface's routing lines: those with methods in the
// order written, and the default line (without methods), or nil; n counts
// every line, so that methods' own routes come after them.
type ifaceLines struct {
	globbed []*ifaceLine
	dflt    *ifaceLine
	n       int
}

// lineFor returns the line routing a method without a line of its own:
// the first whose methods match, else the default line; nil if none.
func (ils ifaceLines) lineFor(method string) *ifaceLine {
	for _, il := range ils.globbed {
		if slices.ContainsFunc(il.globs, func(g string) bool { return annotation.Match(g, method) }) {
			return il
		}
	}
	return ils.dflt
}

// routeLines makes the route of each interface line. A second line
// without methods is an error, and so is a methods list that matches no
// method (see checkGlobs).
func (b *builder) routeLines(in *Interface, lines []*annotation.Line, methods []*types.Func, rs resolver) ifaceLines {
	ils := ifaceLines{n: len(lines)}
	for i, l := range lines {
		il := &ifaceLine{l: l, route: b.newRoute(l, strings.ToLower(in.Name), nil, rs)}
		il.route.order = i
		o, ok := l.Get("methods")
		switch {
		case ok:
			il.globs = o.Value.List
			b.checkGlobs(in, o, methods)
			ils.globbed = append(ils.globbed, il)
		case slices.Contains(l.Invalid, "methods"):
			// Its methods did not parse (an error already): it routes
			// nothing, and is not the default route either.
		case ils.dflt != nil:
			b.errorf(l.Pos, "%s: a second line without methods=; only one line can be the default route (the first is at line %d)", in.Name, ils.dflt.l.Pos.Line)
		default:
			ils.dflt = il
			in.Default = il.route
		}
	}
	return ils
}

// checkGlobs checks a line's methods patterns against the interface's
// methods. A list none of whose patterns matches a method is an error, as
// is a plain name (no * ? or [) that names no method: both are typos. A
// glob that matches nothing beside others that match is only a warning:
// SPEC §2's own example routes "methods=Stock*,Quote" on an interface
// with a Quote and no Stock method.
func (b *builder) checkGlobs(in *Interface, o annotation.Option, methods []*types.Func) {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.Name()
	}
	globs := o.Value.List
	matches := func(g string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return annotation.Match(g, n) })
	}
	if !slices.ContainsFunc(globs, matches) {
		if len(globs) == 1 {
			b.errorf(o.ItemPos(0), "methods: %q matches no method of %s%s", globs[0], in.Name, nameHint(globs[0], names))
		} else {
			var hints []string
			for _, g := range globs {
				if h := annotation.Closest(g, names); h != "" && !strings.ContainsAny(g, "*?[\\") {
					hints = append(hints, h+" for "+g)
				}
			}
			hint := ""
			if len(hints) > 0 {
				hint = "; did you mean " + strings.Join(hints, ", ") + "?"
			}
			b.errorf(o.ItemPos(0), "methods: none of %s matches a method of %s%s", quoteAll(globs), in.Name, hint)
		}
		return
	}
	for i, g := range globs {
		switch {
		case matches(g):
		case !strings.ContainsAny(g, "*?[\\"):
			b.errorf(o.ItemPos(i), "methods: %s has no method %s%s", in.Name, g, nameHint(g, names))
		default:
			b.warnf(o.ItemPos(i), "methods: %q matches no method of %s (the line routes what its other patterns match)", g, in.Name)
		}
	}
}

// nameHint is a did-you-mean for a method name among names, or "".
func nameHint(name string, names []string) string {
	if c := annotation.Closest(name, names); c != "" && c != name {
		return fmt.Sprintf("; did you mean %s?", c)
	}
	return ""
}

// quoteAll is ss quoted and joined with commas.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// sharedNameKeys records, for sharedNameWarnings, the name's keys
// (threshold, reset, ratelimit, ...) that a method's own line without
// name= gives: they belong to the name (SPEC §2), so they set the breaker
// every method of that name shares, in any interface of the package,
// where a newcomer reads them as the method's own. A line that gives
// name= says which it means; a key another line gives the name too (with
// the same value, or it is an error) changes nothing (sharedNameWarnings).
func (b *builder) sharedNameKeys(in *Interface, mlines map[string]*annotation.Line) {
	for _, mm := range in.Methods {
		ml := mlines[mm.Name]
		if ml == nil || mm.Route == nil || mm.Route.Method != mm.Name || ml.Has("name") {
			continue
		}
		var keys []annotation.Option
		for _, o := range ml.Options {
			if annotation.KeyScope(o.Key) == annotation.NameScope {
				keys = append(keys, o)
			}
		}
		if len(keys) > 0 {
			b.sharedKeys = append(b.sharedKeys, sharedKeys{in: in, m: mm, pos: ml.Pos, keys: keys})
		}
	}
}

// sharedKeys is a method line's name keys that sharedNameKeys recorded.
type sharedKeys struct {
	in   *Interface
	m    *Method
	pos  token.Position
	keys []annotation.Option
}

// sharedNameWarnings warns of each method line's name keys recorded by
// sharedNameKeys whose breaker other methods of the package go through
// too, in any interface, naming them and the two fixes.
func (b *builder) sharedNameWarnings() {
	for _, sk := range b.sharedKeys {
		r := sk.m.Route
		// A key another line of the run gives the name too (the same
		// value: another is an error) changes nothing this line does,
		// whichever file was read first.
		all := b.nameInfo("", r.Name)
		var keys []string
		for _, o := range sk.keys {
			if !slices.ContainsFunc(all.every[o.Key], func(p annotation.Option) bool { return p.Pos != o.Pos }) {
				keys = append(keys, o.Key+"="+o.Raw)
			}
		}
		if len(keys) == 0 {
			continue
		}
		var others []string
		for _, md := range b.ifaces {
			for _, om := range md.in.Methods {
				if om == sk.m || om.Route == nil || om.Route.Name != r.Name || om.Route.pkg != r.pkg {
					continue
				}
				name := om.Name
				if md.in != sk.in {
					name = md.in.Name + "." + om.Name
				}
				others = append(others, name)
			}
		}
		if len(others) == 0 {
			continue
		}
		set, it := "sets", "it"
		if len(keys) > 1 {
			set, it = "set", "them"
		}
		goes := "goes"
		if len(others) > 1 {
			goes = "go"
		}
		own := "a name= of its own (such as name=" + r.Name + "-" + strings.ToLower(sk.m.Name) + ")"
		if !annotation.ValidName(r.Name + "-" + strings.ToLower(sk.m.Name)) {
			own = "a name= of its own"
		}
		b.warnf(sk.pos, "%s.%s: %s %s breaker %q, which %s %s through too: a breaker's settings belong to its name, not to a method; give this line %s for a breaker of %s alone, or move %s to the interface's line",
			sk.in.Name, sk.m.Name, strings.Join(keys, " "), set, r.Name, andList(others), goes, own, sk.m.Name, it)
	}
}

// idleBackoff warns of a backoff= that no try waits for: every method of
// in that its routes guard makes one try (attempts at most 1; a budget
// caps tries, it makes none). It did nothing without a word, the
// generated comment still saying "(backoff 2s)", where hedges without
// hedge and stalesize without stale are errors. A backoff that some
// method retries with is no warning, though a method line's attempts=1
// leaves others one try (a write that must not be repeated, say).
func (b *builder) idleBackoff(in *Interface) {
	var opts []*annotation.Option
	idle := map[*annotation.Option][]string{}
	used := map[*annotation.Option]bool{}
	for _, mm := range in.Methods {
		r := mm.Route
		if r == nil || r.backoffOpt == nil {
			continue
		}
		if r.Attempts > 1 {
			used[r.backoffOpt] = true
			continue
		}
		if idle[r.backoffOpt] == nil {
			opts = append(opts, r.backoffOpt)
		}
		idle[r.backoffOpt] = append(idle[r.backoffOpt], in.Name+"."+mm.Name)
	}
	for _, o := range opts {
		if used[o] {
			continue
		}
		b.warnf(o.Pos, "backoff=%s has no effect on %s: the line makes one try, so there is no retry to wait for (a budget caps tries, it makes none); give attempts=N to retry, or remove backoff",
			o.Raw, andList(idle[o]))
	}
}

// otherLineKeys is " key=value" for each line key of the interface line
// il but its timeout, for a line suggested in its place: a line of the
// name alone would drop them (exclude, attempts, ...). "" for none.
func otherLineKeys(il *ifaceLine) string {
	keep := ""
	if il != nil {
		for _, o := range il.l.Options {
			if annotation.KeyScope(o.Key) == annotation.LineScope && o.Key != "timeout" {
				keep += " " + o.Key + "=" + o.Raw
			}
		}
	}
	return keep
}

// routeMethod adds m to in with the route that guards it: its own line ml
// (refining base, the interface line it would otherwise take), else base;
// or none, and why. It checks the route's valid and stale against m and
// decides whether the timeout reaches it.
func (b *builder) routeMethod(in *Interface, m *types.Func, ils ifaceLines, ml *annotation.Line, rs resolver, src string) {
	base := ils.lineFor(m.Name())
	sig := m.Type().(*types.Signature)
	mm := &Method{Name: m.Name(), Sig: sig, Ctx: firstIsContext(sig), Response: responseResult(sig), Handles: sqlHandles(sig), Conns: redisConns(sig), Streams: streamResults(sig), FieldStreams: fieldStreams(sig), Request: requestParam(sig), Readers: readerParams(sig)}
	if !mm.Ctx {
		mm.CtxFrom, mm.CtxWith, mm.CtxSelf = ctxParam(sig)
	}
	in.Methods = append(in.Methods, mm)
	defer func() {
		// A context.Context held in a struct value is not the call's ctx
		// (ctxParam): say so rather than count a caller's cancel as a
		// failure without a word.
		if mm.Route != nil && valueContext(mm) {
			t := types.TypeString(sig.Params().At(0).Type(), pkgQualifier(in.Obj.Pkg()))
			b.warnf(b.methodPos(in, m, ml, src), "%s.%s: its first parameter, of type %s, is a context.Context in a struct value, which the breaker does not take as the call's ctx (a zero one would panic in its hands): a caller's cancel counts as a failure, and no wait ends with it; take a *%s, or a context.Context first", in.Name, m.Name(), t, t)
		}
	}()
	switch {
	case ml != nil && ml.Skip():
		mm.Why = "skip"
		return
	case !lastIsError(sig):
		c, problem := carrier(sig, pkgQualifier(in.Obj.Pkg()))
		if c == nil && problem != "" && (ml != nil || base != nil) {
			b.errorf(b.methodPos(in, m, ml, src), "%s.%s: %s, so a refusal cannot reach the caller; write //breaker:skip on the method, or annotate a narrower interface without it", in.Name, m.Name(), problem)
			mm.Why = "noerror"
			return
		}
		if c == nil {
			if n := sig.Results().Len(); n > 0 && types.Implements(sig.Results().At(n-1).Type(), errorType.Underlying().(*types.Interface)) {
				mm.ErrLike = types.TypeString(sig.Results().At(n-1).Type(), pkgQualifier(in.Obj.Pkg()))
			}
			if ml != nil && problem == "" {
				what := "the last result is not error"
				if mm.ErrLike != "" {
					what = "the last result is " + mm.ErrLike + ", not error: no refusal of the breaker's (an error of the runtime's) can be returned as one"
				}
				b.errorf(ml.Pos, "%s.%s: %s, so the method cannot report a failure or a rejection and cannot be guarded; remove the line or write //breaker:skip", in.Name, m.Name(), what)
			}
			mm.Why = "noerror"
			return
		}
		mm.Carrier = c
	}
	switch {
	case ml != nil:
		var inherit *Route
		if base != nil {
			inherit = base.route
		}
		if ml.Empty && base != nil {
			b.warnf(ml.Pos, "%s.%s: this //breaker: line gives no keys, so the method takes the route it would take without it (breaker %q); remove the line, or give it keys", in.Name, m.Name(), base.route.Name)
		}
		r := b.newRoute(ml, strings.ToLower(in.Name), inherit, rs)
		r.Method = m.Name()
		r.order = ils.n + len(in.Routes)
		mm.Route = r
		in.Routes = append(in.Routes, r)
		if o, ok := ml.Get("timeout"); ok && !mm.Ctx && !mm.CtxWith {
			why := "the method has no context.Context first parameter to carry a deadline"
			if mm.CtxSelf || mm.CtxFrom > 0 || valueContext(mm) {
				why = ctxLacks(mm, in, "a deadline")
			}
			b.errorf(o.Pos, "%s.%s: timeout: %s", in.Name, m.Name(), why)
		}
	case base != nil && localMethod(m, sig):
		// go-redis's, without a ctx: built locally, nothing sent to
		// Redis (a method's own line guards it all the same).
		mm.Why = "local"
		return
	case base != nil:
		mm.Route = base.route
		if !slices.Contains(in.Routes, base.route) {
			in.Routes = append(in.Routes, base.route)
		}
	default:
		mm.Why = "noroute"
		return
	}
	b.methodKey(in, mm)
	b.checkResults(in, mm)
	readers := b.hedgeMethod(in, mm, ml, m, src)
	b.readerMethod(in, mm, m, ml, src, readers)
	if mm.Route.Timeout == 0 {
		return
	}
	if what := ctxBound(mm, pkgQualifier(in.Obj.Pkg())); what != "" {
		// The result is used after the call returns: database/sql ends
		// it when its ctx ends, so a deadline cancelled then would end it
		// under the caller.
		pos := b.methodPos(in, m, ml, src)
		fix := "; give the caller's ctx a deadline that covers the result's use instead"
		if ml != nil && ml.Has("timeout") {
			o, _ := ml.Get("timeout")
			pos = o.Pos
			fix = "; remove timeout= from the method's line, and give the caller's ctx a deadline that covers the result's use instead"
		} else {
			// A method's own line takes the line keys of the route it
			// refines, the timeout included, and timeout=0 is no
			// duration: only a line of the interface without timeout,
			// matched first, routes the method without it.
			fix += fmt.Sprintf(", and route %s through a line without timeout to end this warning: %sname=%s methods=%s%s, above %s's line that gives timeout=%s (a method's own //breaker: line would take that timeout again, and timeout=0 is not accepted)",
				m.Name(), annotation.Prefix, mm.Route.Name, m.Name(), otherLineKeys(base), in.Name, mm.Route.Timeout)
		}
		b.warnf(pos, "%s.%s: timeout=%s of breaker %q has no effect: %s%s", in.Name, m.Name(), mm.Route.Timeout, mm.Route.Name, what, fix)
		return
	}
	if mm.Ctx || mm.CtxWith {
		mm.UseTimeout = true
	} else if ml == nil || !ml.Has("timeout") {
		mpos := b.fset.Position(m.Pos())
		if mpos.Filename != src {
			mpos = in.Pos // an embedded method declared elsewhere
		}
		why := "the method has no context.Context first parameter"
		if mm.CtxSelf || mm.CtxFrom > 0 || valueContext(mm) {
			why = ctxLacks(mm, in, "a deadline")
		} else {
			// Say what ends it, as every warning does.
			why += fmt.Sprintf("; take one first to bound the call, or route %s through a line of the interface without timeout, above the line that gives timeout=%s (%sname=%s methods=%s%s), or write //breaker:skip above it if it needs no guard (a Close, say)",
				m.Name(), mm.Route.Timeout, annotation.Prefix, mm.Route.Name, m.Name(), otherLineKeys(base))
		}
		b.warnf(mpos, "%s.%s: timeout=%s of breaker %q has no effect: %s", in.Name, m.Name(), mm.Route.Timeout, mm.Route.Name, why)
	}
}

// ctxLacks says why the wrapper of mm, whose ctx comes from a parameter
// (Method.CtxSelf, or CtxFrom without CtxWith), cannot give the wrapped
// method a ctx of its own carrying what (a deadline, say): the
// parameter's type has no way to take one.
func ctxLacks(mm *Method, in *Interface, what string) string {
	if mm.CtxSelf {
		return selfCtx(mm, in, what+" cannot be put into")
	}
	if valueContext(mm) {
		t := types.TypeString(mm.Sig.Params().At(0).Type(), pkgQualifier(in.Obj.Pkg()))
		return fmt.Sprintf("its first parameter, of type %s, is a context.Context in a struct value, which the breaker does not take as the call's ctx", t)
	}
	p := mm.Sig.Params().At(mm.CtxFrom - 1)
	t := types.TypeString(p.Type(), pkgQualifier(in.Obj.Pkg()))
	name := p.Name()
	if name == "" || name == "_" {
		name = "its " + t + " parameter"
	}
	return fmt.Sprintf("the method's ctx is %s.Context(), and %s has no method WithContext(context.Context) %s to carry %s", name, t, t, what)
}

// valueContext reports whether mm's first parameter is a context.Context
// in a struct value, which ctxParam does not take as the call's ctx, and
// no other parameter gives one.
func valueContext(mm *Method) bool {
	return !mm.Ctx && mm.CtxFrom == 0 && mm.Sig.Params().Len() > 0 && implementsContext(mm.Sig.Params().At(0).Type())
}

// selfCtx says, for a method whose first parameter is a context.Context
// of another type (Method.CtxSelf), that it is one, of which type, and
// what the wrapper cannot do with it: it passes the caller's value on
// as it is, having no way to make one of that type around a ctx of its
// own.
func selfCtx(mm *Method, in *Interface, cannot string) string {
	t := types.TypeString(mm.Sig.Params().At(0).Type(), pkgQualifier(in.Obj.Pkg()))
	return fmt.Sprintf("the first parameter is a context.Context of type %s, which %s", t, cannot)
}

// ctxBound says why mm's result outlives the call bound to the call's ctx,
// "" if it does not: database/sql closes a *sql.Row's and *sql.Rows' rows
// when the ctx of their query ends, and rolls a *sql.Tx back when the ctx
// of BeginTx does; a reader made from the ctx (an HTTP body, an object
// store's stream) fails its next Read. q writes types as the interface's
// file does.
func ctxBound(mm *Method, q types.Qualifier) string {
	_, rows := mm.Handle("Rows")
	_, tx := mm.Handle("Tx")
	switch {
	case mm.Carrier != nil && mm.Carrier.Refuse == CarrySQLRow:
		return "the *sql.Row is read after the call returns, and a deadline would close it before Scan"
	case rows:
		return "the *sql.Rows are read after the call returns, and a deadline would close them before Next"
	case tx:
		return "the *sql.Tx is used after the call returns, and a deadline would roll it back"
	}
	if mm.Response > 0 {
		return "" // its body holds the deadline's cancel until it is closed (httpguard.CancelOnClose)
	}
	res := mm.Sig.Results()
	for i := range res.Len() {
		t := res.At(i).Type()
		if what := readLater(t, map[types.Type]bool{}); what != "" {
			// Used after the call returns, through the call's ctx: an
			// HTTP body, an object store's reader, a gRPC stream, a
			// channel a goroutine fills, an iterator. Those made from
			// the ctx end with it.
			return fmt.Sprintf("the %s (%s) is used after the call returns, and the deadline, cancelled then, would end it", types.TypeString(t, q), what)
		}
	}
	return ""
}

// readLater says what in a value of type t is used after the call that
// returned it, through that call's ctx, or "": a stream (Read and Close,
// but a connection or a file, which their ctx does not bound once made),
// a value that keeps a ctx (a method Context, as a gRPC stream has), a
// channel, a func (an iterator), or a struct or pointer holding one of
// those in an exported field (an object store's output with its Body). An
// interface or a map or slice of such values is not looked into.
func readLater(t types.Type, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	if hasContext(t) {
		return "it keeps its ctx"
	}
	if isReader(t) && hasClose(t) {
		if ctxFree(t) {
			return ""
		}
		return "a stream"
	}
	switch u := t.Underlying().(type) {
	case *types.Chan:
		return "a channel"
	case *types.Signature:
		return "a func"
	case *types.Pointer:
		return readLater(u.Elem(), seen)
	case *types.Array:
		return readLater(u.Elem(), seen)
	case *types.Struct:
		for f := range u.Fields() {
			if !f.Exported() {
				continue // the caller's to use are the exported fields (a go-redis command's channels are its own)
			}
			if what := readLater(f.Type(), seen); what != "" {
				return what + ", field " + f.Name()
			}
		}
	}
	return ""
}

// hasContext reports whether t has a method Context() returning a
// context.Context.
func hasContext(t types.Type) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, "Context")
	f, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	sig := f.Signature()
	if sig.Params().Len() != 0 || sig.Results().Len() != 1 {
		return false
	}
	n, ok := types.Unalias(sig.Results().At(0).Type()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

// streamResults returns the indexes of sig's results that are streams
// (see Method.Streams).
func streamResults(sig *types.Signature) []int {
	var is []int
	for i := range sig.Results().Len() {
		t := sig.Results().At(i).Type()
		switch t.Underlying().(type) {
		case *types.Pointer, *types.Interface:
		default:
			continue
		}
		if isReader(t) && hasClose(t) && !isSQLHandle(t) {
			is = append(is, i)
		}
	}
	return is
}

// fieldStreams returns the exported fields of sig's results that are
// streams (see Method.FieldStreams): a result that is a struct, or a
// pointer to one, other than a *net/http.Response (its Body is released
// with it), and a field that is a pointer or an interface with Read and
// Close, not a connection nor a file.
func fieldStreams(sig *types.Signature) []FieldStream {
	var fs []FieldStream
	for i := range sig.Results().Len() {
		t := types.Unalias(sig.Results().At(i).Type())
		if isNamedPtr(t, "net/http", "Response") {
			continue
		}
		ptr := false
		if p, ok := t.(*types.Pointer); ok {
			t, ptr = p.Elem(), true
		}
		if _, param := t.(*types.TypeParam); param {
			continue
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for f := range st.Fields() {
			ft := f.Type()
			switch ft.Underlying().(type) {
			case *types.Pointer, *types.Interface:
			default:
				continue
			}
			if f.Exported() && !f.Embedded() && isReader(ft) && hasClose(ft) && !ctxFree(ft) {
				fs = append(fs, FieldStream{Index: i, Field: f.Name(), Ptr: ptr})
			}
		}
	}
	return fs
}

// isSQLHandle reports whether t is one of database/sql's handles.
func isSQLHandle(t types.Type) bool {
	for _, h := range sqlHandleTypes {
		if isNamedPtr(t, "database/sql", h.Type) {
			return true
		}
	}
	return false
}

// ctxFree reports whether t is a stream that its maker's ctx does not
// bound once made: a connection of package net or crypto/tls (a dial's
// ctx bounds the dial only) or an *os.File. A timeout on the method that
// makes one bounds the making, and is kept.
func ctxFree(t types.Type) bool {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	switch n.Obj().Pkg().Path() {
	case "net", "crypto/tls":
		return true
	case "os":
		return n.Obj().Name() == "File"
	}
	return false
}

// methodPos is where errors about method m go: its line, else its own
// declaration, else (an embedded method declared elsewhere) the
// interface's name.
func (b *builder) methodPos(in *Interface, m *types.Func, ml *annotation.Line, src string) token.Position {
	if ml != nil {
		return ml.Pos
	}
	if p := b.fset.Position(m.Pos()); p.Filename == src {
		return p
	}
	return in.Pos
}

// hedgeNeedsChain reports the hedge keys of an interface without the chain
// flag: a plain wrapper has no other source to ask.
func (b *builder) hedgeNeedsChain(in *Interface, lines []*annotation.Line, mlines map[string]*annotation.Line) {
	all := slices.Clone(lines)
	for _, l := range mlines {
		all = append(all, l)
	}
	for _, l := range all {
		if o, ok := l.Get("hedge"); ok {
			b.errorf(o.Pos, "hedge: %s has no fallback chain to hedge with; add the chain flag to one of its interface lines", in.Name)
		}
	}
}

// hedgeMethod decides whether the chain races the sources of m, whose
// route has hedge: only with a ctx to cancel a losing source with, a
// context.Context first parameter or a *http.Request whose ctx each
// source's request is sent with. A losing source's answer that holds
// something open (an *http.Response, a *sql.Row or *sql.Rows) is
// released by the race (render's drop), and each source sends a request
// of its own (httpguard.Take). A hedge that reaches any other method
// draws a warning (an error when the line is on that method itself); one
// taking a reader (Method.Readers) is asked as a chain without hedge,
// one source at a time, which a warning says even on its own line: its
// sources are still all asked, in order: that warning's text is returned
// (readersWhy), for readerMethod to say it with what it says of them.
func (b *builder) hedgeMethod(in *Interface, mm *Method, ml *annotation.Line, m *types.Func, src string) (readersWhy string) {
	r := mm.Route
	if r.Hedge == 0 || !in.Chain {
		return ""
	}
	// A race asks several sources at once and cancels the losers: it
	// needs a ctx to cancel a loser with.
	var why string
	readers := false // why is the method's readers
	switch {
	case mm.CtxSelf || mm.CtxFrom > 0 && !mm.CtxWith:
		why = ctxLacks(mm, in, "the ctx that cancels a losing source")
	case !mm.Ctx && (mm.Request == 0 || mm.CtxFrom != mm.Request || !mm.CtxWith):
		why = "the method has no context.Context first parameter to cancel a losing source with"
	case requests(mm.Sig) > 1:
		why = "the method takes more than one *http.Request: only the first is given to each racing source as its own, so the sources would read the others' bodies at once"
	case len(mm.Readers) > 0:
		readers = true
		// A request's body is given to each source as its own through
		// GetBody; a reader has no such copy, and two sources reading it
		// at once would each send a part of it.
		why = fmt.Sprintf("its argument %s is a reader, which two sources cannot read at once, and which has no copy to give each (as a request's GetBody gives): the chain asks its sources one at a time; pass a []byte to hedge it", paramName(mm.Sig, mm.Readers[0]))
	}
	switch {
	case why == "":
		mm.Hedged = true
	case readers:
		// One warning says it with what readerMethod says of them.
		return fmt.Sprintf("hedge=%s of breaker %q has no effect: %s", r.Hedge, r.Name, why)
	case ml != nil && ml.Has("hedge") && len(mm.Readers) == 0:
		o, _ := ml.Get("hedge")
		b.errorf(o.Pos, "%s.%s: hedge: %s", in.Name, m.Name(), why)
	default:
		mpos := b.fset.Position(m.Pos())
		if mpos.Filename != src {
			mpos = in.Pos // an embedded method declared elsewhere
		}
		b.warnf(mpos, "%s.%s: hedge=%s of breaker %q has no effect: %s", in.Name, m.Name(), r.Hedge, r.Name, why)
	}
	return ""
}

// place adds in to the output file of src, creating it on first use.
func (b *builder) place(in *Interface, pkg *types.Package, f *ast.File, src string) {
	out := load.OutputOf(src)
	file := b.files[out]
	if file == nil {
		file = &File{
			Path:     out,
			Source:   src,
			Build:    load.BuildLine(f),
			PkgName:  pkg.Name(),
			PkgPath:  pkg.Path(),
			Reserved: map[string]bool{},
		}
		b.files[out] = file
	}
	for _, n := range pkg.Scope().Names() {
		file.Reserved[n] = true
	}
	// A type parameter named runtime or context is in scope in the
	// wrapper's every declaration: no import may take its name.
	for i := range in.TypeParams.Len() {
		file.Reserved[in.TypeParams.At(i).Obj().Name()] = true
	}
	file.Interfaces = append(file.Interfaces, in)
}

// readerParams returns the indexes of sig's parameters that are bodies
// a try reads (see Method.Readers and isBody).
func readerParams(sig *types.Signature) []int {
	var is []int
	for i := range sig.Params().Len() {
		if p := sig.Params().At(i); isBody(p.Name(), p.Type()) {
			is = append(is, i)
		}
	}
	return is
}

// isBody reports whether a parameter named name, of type t, is a body
// that a try reads and a later try must read again from the start:
//
//   - an interface (or a type parameter's constraint) with Read whose
//     every other method is one a read-only body has (bodyMethods):
//     io.Reader, io.ReadCloser, io.ReadSeeker, io.ReadSeekCloser, an
//     interface{ io.Reader; Len() int };
//   - or a pointer to one of bodyTypes: *strings.Reader, *bytes.Reader,
//     *io.SectionReader, *io.LimitedReader, *bufio.Reader,
//     *io.PipeReader and *os.File (which has Write too, but an *os.File
//     argument is most often a file to upload).
//
// Anything with Write is not (a *bytes.Buffer to fill, a net.Conn, an
// io.ReadWriter, a *bufio.ReadWriter): a later try is given it as the
// try before left it, as before readers were sought back. Neither is a
// parameter named rand or random, crypto's name for a source of entropy
// (crypto.Signer's Sign(rand io.Reader, ...)) that every try reads on
// from, nor any other pointer with Read (a *rand.Rand).
func isBody(name string, t types.Type) bool {
	if name == "rand" || name == "random" || !isReader(t) {
		return false
	}
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		n, ok := types.Unalias(p.Elem()).(*types.Named)
		return ok && n.Obj().Pkg() != nil && slices.Contains(bodyTypes[n.Obj().Pkg().Path()], n.Obj().Name())
	}
	it, ok := t.Underlying().(*types.Interface)
	if !ok {
		return false
	}
	for f := range it.Methods() {
		if !slices.Contains(bodyMethods, f.Name()) {
			return false
		}
	}
	return true
}

// bodyMethods are the methods an interface argument taken for a body
// may have: Read, and those of a read-only body.
var bodyMethods = []string{"Read", "Close", "Seek", "ReadAt", "WriteTo", "Len", "Size"}

// bodyTypes are the types, by package path, a pointer to which is taken
// for a body (see isBody).
var bodyTypes = map[string][]string{
	"strings": {"Reader"},
	"bytes":   {"Reader"},
	"bufio":   {"Reader"},
	"io":      {"SectionReader", "LimitedReader", "PipeReader"},
	"os":      {"File"},
}

// paramName names parameter i of sig in a message: its name, or
// "argument i+1".
func paramName(sig *types.Signature, i int) string {
	if n := sig.Params().At(i).Name(); n != "" && n != "_" {
		return n
	}
	return "argument " + strconv.Itoa(i+1)
}

// readerMethod warns of m's bodies that a later try could not send
// again (see Method.Readers): each that is no io.Seeker, when the method
// retries, in one warning at the method. hedged is hedgeMethod's warning
// that the method's readers stop its hedge: said in the same warning,
// first, so that one method draws one warning, worded alike for all. A
// chain's method without retries leaves its bodies to chainReaders: the
// interface's one warning names them all.
func (b *builder) readerMethod(in *Interface, mm *Method, m *types.Func, ml *annotation.Line, src, hedged string) {
	if !mm.Route.Retries() && !in.Chain {
		return
	}
	q := pkgQualifier(in.Obj.Pkg())
	// What would send it again, and what happens instead: a hedged chain
	// method without retries has no retry to stop.
	again, instead, every := "a later try or fallback", "a retry stops with the first try's answer and each fallback is passed over as unsent", "every try and source"
	switch {
	case !in.Chain:
		again, instead, every = "a later try", "a retry stops with the first try's answer", "every try"
	case !mm.Route.Retries():
		again, instead, every = "a fallback", "each fallback is passed over as unsent", "every source"
	}
	var says, names []string
	for _, i := range mm.Readers {
		t := mm.Sig.Params().At(i).Type()
		if types.Implements(t, seekerType) {
			continue
		}
		says = append(says, fmt.Sprintf("%s, of type %s, is sent again by %s only when it can be sought back to where the call found it: %s, so %s",
			paramName(mm.Sig, i), types.TypeString(t, q), again, unseekableWhy(t), instead))
		names = append(names, fmt.Sprintf("%s's %s (%s)", m.Name(), paramName(mm.Sig, i), types.TypeString(t, q)))
	}
	advice := "take an io.ReadSeeker (a *strings.Reader, a *bytes.Reader, an *os.File) or a []byte to have " + every + " send it whole"
	if mm.Response > 0 {
		// An HTTP client closes a body that is an io.Closer once it has
		// sent it: an *os.File then cannot be sought back.
		advice = "pass a *strings.Reader or a *bytes.Reader (an io.Seeker that is no io.Closer: an HTTP client closes a body that is one, an *os.File too, once it has sent it, and a closed file cannot be sought back) or take a []byte, to have " + every + " send it whole"
	}
	switch {
	case hedged != "":
		if len(says) > 0 {
			hedged += "; and " + strings.Join(says, "; and ") + "; " + advice
		}
		b.warnf(b.methodPos(in, m, ml, src), "%s.%s: %s", in.Name, m.Name(), hedged)
	case len(says) == 0:
	case mm.Route.Retries():
		b.warnf(b.methodPos(in, m, ml, src), "%s.%s: %s; %s", in.Name, m.Name(), strings.Join(says, "; and "), advice)
	default:
		b.chainBodies = append(b.chainBodies, names...)
		b.chainHTTP = b.chainHTTP || mm.Response > 0
	}
}

// chainReaders warns once of the bodies no io.Seeker that in's chain
// methods without retries take (builder.chainBodies): a primary that
// read one and failed leaves the chain's fallbacks passed over.
func (b *builder) chainReaders(in *Interface) {
	if len(b.chainBodies) == 0 {
		return
	}
	advice := "take an io.ReadSeeker (a *strings.Reader, a *bytes.Reader, an *os.File) or a []byte to have every source send it whole"
	if b.chainHTTP { // a body a listed method sends in an HTTP request
		advice = "pass a *strings.Reader or a *bytes.Reader (an io.Seeker that is no io.Closer: an HTTP client closes a body that is one, an *os.File too, once it has sent it, and a closed file cannot be sought back) or take a []byte, to have every source send it whole"
	}
	b.warnf(in.Pos, "%s: the chain sends a fallback a body the primary read only when it can be sought back to where the call found it, and these are no io.Seeker: %s; a reader passed to one that is no io.Seeker (or whose Seek fails) is sent once, and the fallbacks are passed over as unsent; %s",
		in.Name, strings.Join(b.chainBodies, ", "), advice)
	b.chainBodies, b.chainHTTP = nil, false
}

// unseekableWhy says when a body of type t, no io.Seeker, is sent once:
// always for a concrete type; for an interface, when the reader passed
// is no io.Seeker either.
func unseekableWhy(t types.Type) string {
	if types.IsInterface(t) {
		return "a reader passed that is no io.Seeker (or whose Seek fails) is sent once"
	}
	return "it cannot be, and is sent once"
}

// seekerType is io.Seeker, spelled in go/types.
var seekerType = ioInterface("Seek", types.NewTuple(types.NewParam(0, nil, "offset", types.Typ[types.Int64]), types.NewParam(0, nil, "whence", types.Typ[types.Int])),
	types.NewTuple(types.NewParam(0, nil, "", types.Typ[types.Int64]), types.NewParam(0, nil, "", errorType)))

// invalidWhy says where to look for the type errors that made method m's
// type invalid: the imports of m's package that could not be loaded
// (importErrors, reported at their lines), the package's own type
// errors, or, for a method m embeds from another package, that
// package's, which the go command does not report with the package's
// (the type checker reads the other package as best it can).
func (b *builder) invalidWhy(m *types.Func, p *packages.Package) string {
	if m.Pkg() == nil || m.Pkg() == p.Types {
		if errs := b.importErrors(p); len(errs) > 0 {
			var at []string
			for _, e := range errs {
				at = append(at, e.Pos.String())
			}
			return fmt.Sprintf("the package could not import what its types need: fix the import error(s) at %s first", andList(at))
		}
		return "fix the package's type errors first"
	}
	at := ""
	if p := b.fset.Position(m.Pos()); p.IsValid() {
		at = " (" + p.String() + ")"
	}
	return fmt.Sprintf("it is declared in package %s%s, which has type errors: see them with go build %s, and fix them first", m.Pkg().Path(), at, m.Pkg().Path())
}

// couldNotImport matches go/types' error of an import it could not load.
var couldNotImport = regexp.MustCompile(`^could not import (\S+)`)

// importErrors reports, once a package, the imports of p that the type
// checker could not load, each at its import with the go command's
// reason ("no required module provides package ...; to add it: go get
// ...", a missing go.sum entry, a package with errors of its own), and
// returns them. The type checker says only "could not import X (invalid
// package name: "")", and the methods that spell X's types had "an
// invalid type", with no word of the import: a module not yet required
// took go vet to find.
func (b *builder) importErrors(p *packages.Package) []*annotation.Error {
	if errs, ok := b.importErrs[p]; ok {
		return errs
	}
	var errs []*annotation.Error
	var paths []string
	for _, e := range p.Errors {
		if e.Kind != packages.TypeError {
			continue
		}
		if m := couldNotImport.FindStringSubmatch(e.Msg); m != nil && !slices.Contains(paths, m[1]) {
			paths = append(paths, m[1])
			errs = append(errs, &annotation.Error{Pos: parsePos(e.Pos), Msg: "could not import " + m[1]})
		}
	}
	if len(paths) > 0 && len(p.GoFiles) > 0 {
		// Ask the go command why, as go build would say it.
		why := load.WhyNotLoaded(filepath.Dir(p.GoFiles[0]), paths, b.opts.Tags, b.opts.Env)
		for i, path := range paths {
			w := why[path]
			if w == "" {
				w = "it has errors of its own: go build " + path + " shows them"
			}
			errs[i].Msg += ": " + w
		}
	}
	b.run.Errors = append(b.run.Errors, errs...)
	if b.importErrs == nil {
		b.importErrs = map[*packages.Package][]*annotation.Error{}
	}
	b.importErrs[p] = errs
	return errs
}

// andList joins ss as a list in words: "a", "a and b", "a, b and c".
func andList(ss []string) string {
	if len(ss) < 2 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// sameFile reports whether a and b name one file, either relative.
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}
