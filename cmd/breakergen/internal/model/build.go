package model

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
)

// Options filter a run.
type Options struct {
	// Types, if not empty, names the only interfaces to emit.
	Types []string
	// Tags and Env are the run's build tags and environment, for the
	// listing that asks the go command why an import failed to load
	// (importErrors): only a run that failed so makes it.
	Tags string
	Env  []string
}

type builder struct {
	fset       *token.FileSet
	opts       Options
	outputs    map[string]bool
	run        *Run
	files      map[string]*File // by output path
	names      map[nameKey]*nameInfo
	routes     []*Route                                  // every route of the run, for resolve
	found      map[string]bool                           // -type names found
	generated  map[string]map[string]token.Position      // pkg id → generated top-level names
	scanned    map[*ast.CommentGroup]bool                // read for //breaker: lines
	keyErrs    map[token.Position]bool                   // key options already reported
	importErrs map[*packages.Package][]*annotation.Error // imports that could not be loaded, by package (importErrors)
	ifaces     []*modelled                               // for the warnings about what is guarded
	sources    map[string][]string                       // lines of files read for embedded methods' lines
	// testVariants are the loaded test variants of the packages, by
	// package path (loaded only when some test file may hold an
	// annotation); testDecls the in-package test files of the others,
	// each parsed when a name is looked for in it, by package ID.
	testVariants map[string]*packages.Package
	testDecls    map[string][]*testFile
	// chainBodies are the bodies no io.Seeker that the methods of the
	// interface being modelled take in a chain without retries, as
	// "Method's name (type)": one warning says them all (chainReaders).
	chainBodies []string
	chainHTTP   bool         // one of chainBodies is a method's that answers an *http.Response
	sharedKeys  []sharedKeys // method lines' name keys, for sharedNameWarnings
}

// scan returns the //breaker: lines of cg (see [annotation.Scan]) and
// marks cg read: the lines of the comments never read annotate nothing.
func (b *builder) scan(cg *ast.CommentGroup, where annotation.Where) ([]*annotation.Line, []*annotation.Error, []*annotation.Error) {
	if cg != nil {
		b.scanned[cg] = true
	}
	return annotation.Scan(b.fset, cg, where)
}

func (b *builder) errorf(pos token.Position, format string, args ...any) {
	b.run.Errors = append(b.run.Errors, annotation.Errorf(pos, format, args...))
}

func (b *builder) warnf(pos token.Position, format string, args ...any) {
	b.run.Warnings = append(b.run.Warnings, annotation.Errorf(pos, "warning: "+format, args...))
}

// Build works out the run from the loaded packages.
func Build(res *load.Result, opts Options) *Run {
	b := &builder{
		fset:      res.Fset,
		opts:      opts,
		outputs:   res.Outputs,
		run:       &Run{Sources: map[string]bool{}},
		files:     map[string]*File{},
		names:     map[nameKey]*nameInfo{},
		found:     map[string]bool{},
		generated: map[string]map[string]token.Position{},
		scanned:   map[*ast.CommentGroup]bool{},
		keyErrs:   map[token.Position]bool{},
		sources:   map[string][]string{},

		testVariants: map[string]*packages.Package{},
		testDecls:    map[string][]*testFile{},
	}
	for _, p := range res.Packages {
		// The test variant, "path [path.test]" (its ForTest is not loaded).
		if p.ID == p.PkgPath+" ["+p.PkgPath+".test]" && p.Types != nil {
			b.testVariants[p.PkgPath] = p
		}
	}
	for _, pat := range res.Unmatched {
		if res.NoModule != "" {
			b.errorf(token.Position{}, "pattern %s matched no packages: no go.mod in %s or above it, and breakergen works in a module: run go mod init (then go get -tool github.com/breakergen/breakergen/cmd/breakergen) there, or run breakergen in the module", pat, res.NoModule)
			continue
		}
		b.errorf(token.Position{}, "pattern %s matched no packages", pat)
	}
	for _, p := range res.Packages {
		b.packageErrors(p)
	}
	for _, p := range res.Packages {
		if strings.HasSuffix(p.ID, ".test") || p.Types == nil {
			continue
		}
		for _, f := range p.Syntax {
			name := b.fset.File(f.Pos()).Name()
			if b.run.Sources[name] || b.outputs[name] {
				continue
			}
			if p.Dir != "" && filepath.Dir(name) != p.Dir {
				// A file the go command made (cgo's output, in its cache):
				// not the user's source, and no place to write.
				b.cgoFile(f)
				continue
			}
			b.run.Sources[name] = true
			b.file(p, f, name)
			b.unread(f)
		}
	}
	b.resolve()
	b.keyChecks()
	b.guardWarnings()
	b.sharedNameWarnings()
	for _, t := range opts.Types {
		if !b.found[t] {
			var annotated []string
			for _, md := range b.ifaces {
				annotated = append(annotated, md.in.Name)
			}
			hint := ""
			if c := annotation.Closest(t, annotated); c != "" {
				hint = "; did you mean " + c + "?"
			}
			b.errorf(token.Position{}, "-type %s: no annotated interface of that name in the packages loaded%s", t, hint)
		}
	}
	// A package's _test.go files (loaded when they hold annotations) share
	// its scope when its tests are built: an import of a wrapper must not
	// take a name one of them declares.
	for _, f := range b.files {
		for n := range b.generated[f.PkgPath] {
			f.Reserved[n] = true
		}
		if tv := b.testVariants[f.PkgPath]; tv != nil {
			for _, n := range tv.Types.Scope().Names() {
				f.Reserved[n] = true
			}
		}
		slices.SortFunc(f.Interfaces, func(x, y *Interface) int { return cmp.Compare(x.Name, y.Name) })
		b.run.Files = append(b.run.Files, f)
	}
	slices.SortFunc(b.run.Files, func(x, y *File) int { return cmp.Compare(x.Path, y.Path) })
	annotation.SortErrors(b.run.Errors)
	if len(opts.Types) > 0 {
		// A -type run speaks for the files it writes: another file's
		// interfaces are their own go:generate line's, warnings and all
		// (-strict -type C must not fail on A's).
		written := map[string]bool{}
		for _, f := range b.run.Files {
			written[f.Source] = true
		}
		b.run.Warnings = slices.DeleteFunc(b.run.Warnings, func(w *annotation.Error) bool {
			return w.Pos.Filename != "" && !written[w.Pos.Filename]
		})
	}
	annotation.SortErrors(b.run.Warnings)
	b.run.Errors = slices.CompactFunc(b.run.Errors, func(x, y *annotation.Error) bool { return x.Error() == y.Error() })
	b.run.Errors = foldStale(b.run.Errors)
	return b.run
}

// foldStale folds the errors of one stale key that misfits many methods
// (a line over a whole client, such as one embedding redis.Cmdable, whose
// commands take variadic arguments that cannot key a cache) into one,
// with the first few: errs are sorted, so those of one key are adjacent.
func foldStale(errs []*annotation.Error) []*annotation.Error {
	const most = 10
	var out []*annotation.Error
	for i := 0; i < len(errs); {
		j := i + 1
		if strings.HasPrefix(errs[i].Msg, "stale: ") {
			for j < len(errs) && errs[j].Pos == errs[i].Pos && strings.HasPrefix(errs[j].Msg, "stale: ") {
				j++
			}
		}
		if j-i <= most {
			out = append(out, errs[i:j]...)
			i = j
			continue
		}
		var first []string
		for _, e := range errs[i : i+2] {
			first = append(first, strings.TrimPrefix(e.Msg, "stale: "))
		}
		out = append(out, &annotation.Error{Pos: errs[i].Pos, Msg: fmt.Sprintf("stale: %d methods this key reaches cannot keep a stale answer; the first: %s; and %d more: put stale on a line whose methods= names the reads it should serve", j-i, strings.Join(first, "; "), j-i-2)})
		i = j
	}
	return out
}

// packageErrors reports the errors that stop a run: the go command's and
// the parser's. Type errors are checked per annotated interface.
func (b *builder) packageErrors(p *packages.Package) {
	for _, e := range p.Errors {
		if e.Kind == packages.ListError && strings.HasPrefix(e.Msg, "# ") {
			// The go command's compile output for the package: the same
			// type errors, checked per annotated interface.
			continue
		}
		switch e.Kind {
		case packages.ListError, packages.ParseError, packages.UnknownError:
			b.run.Errors = append(b.run.Errors, &annotation.Error{Pos: parsePos(e.Pos), Msg: e.Msg})
		}
	}
}

func parsePos(s string) token.Position {
	// file:line:col, file:line or "" / "-".
	var p token.Position
	parts := strings.Split(s, ":")
	nums := []int{}
	for len(parts) > 1 && len(nums) < 2 {
		n, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		parts = parts[:len(parts)-1]
	}
	if len(nums) == 0 || s == "" || s == "-" {
		return p
	}
	p.Filename = strings.Join(parts, ":")
	p.Line = nums[0]
	if len(nums) > 1 {
		p.Column = nums[1]
	}
	return p
}

// declaresAny reports whether f declares a type named in names that may
// be an annotated interface: an interface literal, or a type whose doc
// comment holds a //breaker: line (a defined or alias interface type).
// A struct of the same name does not select its file.
func declaresAny(f *ast.File, names []string) bool {
	annotated := func(cg *ast.CommentGroup) bool {
		return cg != nil && slices.ContainsFunc(cg.List, func(c *ast.Comment) bool { return strings.HasPrefix(c.Text, annotation.Prefix) })
	}
	for _, decl := range f.Decls {
		if d, ok := decl.(*ast.GenDecl); ok && d.Tok == token.TYPE {
			for _, s := range d.Specs {
				ts := s.(*ast.TypeSpec)
				if !slices.Contains(names, ts.Name.Name) {
					continue
				}
				if _, ok := ts.Type.(*ast.InterfaceType); ok || annotated(ts.Doc) || annotated(d.Doc) {
					return true
				}
			}
		}
	}
	return false
}

// file scans one source file for annotated interfaces.
func (b *builder) file(p *packages.Package, f *ast.File, name string) {
	selected := len(b.opts.Types) > 0 && declaresAny(f, b.opts.Types)
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				b.strayLines(d.Doc, d.Tok.String())
				continue
			}
			for _, s := range d.Specs {
				ts := s.(*ast.TypeSpec)
				var lines []*annotation.Line
				for _, doc := range []*ast.CommentGroup{d.Doc, ts.Doc} {
					if doc == nil || (doc == d.Doc && d.Lparen.IsValid()) {
						continue
					}
					ls, errs, warns := b.scan(doc, annotation.OnInterface)
					lines = append(lines, ls...)
					b.run.Errors = append(b.run.Errors, errs...)
					b.run.Warnings = append(b.run.Warnings, warns...)
				}
				mlines := b.methodLines(ts)
				if len(lines) == 0 && len(mlines) == 0 {
					continue
				}
				// Every annotated interface is modelled, so that a -type
				// run resolves shared names like a full run; only the
				// selected ones are emitted, with the others of their
				// files: a file's wrappers go to one output, which would
				// lose them otherwise.
				emit := len(b.opts.Types) == 0 || selected || slices.Contains(b.opts.Types, ts.Name.Name)
				if slices.Contains(b.opts.Types, ts.Name.Name) {
					b.found[ts.Name.Name] = true
				}
				b.iface(p, f, name, ts, lines, mlines, emit)
			}
			if d.Lparen.IsValid() && d.Doc != nil {
				ls, _, _ := b.scan(d.Doc, annotation.OnInterface)
				for _, l := range ls {
					b.errorf(l.Pos, "//breaker: on a type ( ... ) group annotates nothing; put it on each interface's own doc comment")
				}
			}
		case *ast.FuncDecl:
			b.strayLines(d.Doc, "func")
			if d.Body == nil {
				continue
			}
			ast.Inspect(d.Body, func(n ast.Node) bool {
				gd, ok := n.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					return true
				}
				for _, s := range gd.Specs {
					ts := s.(*ast.TypeSpec)
					docs := []*ast.CommentGroup{ts.Doc}
					if !gd.Lparen.IsValid() {
						docs = append(docs, gd.Doc)
					}
					for _, doc := range docs {
						ls, _, _ := b.scan(doc, annotation.OnInterface)
						if len(ls) > 0 || len(b.methodLines(ts)) > 0 {
							b.errorf(b.fset.Position(ts.Name.Pos()), "%s is declared inside a function: only package-level interfaces can be wrapped", ts.Name.Name)
							break
						}
					}
				}
				return true
			})
		}
	}
}

// methodLines scans the doc comments inside an interface literal.
func (b *builder) methodLines(ts *ast.TypeSpec) map[string]*annotation.Line {
	it, ok := ts.Type.(*ast.InterfaceType)
	if !ok || it.Methods == nil {
		return nil
	}
	out := map[string]*annotation.Line{}
	for _, field := range it.Methods.List {
		ls, errs, warns := b.scan(field.Doc, annotation.OnMethod)
		b.run.Errors = append(b.run.Errors, errs...)
		b.run.Warnings = append(b.run.Warnings, warns...)
		if field.Comment != nil {
			b.scanned[field.Comment] = true
			for _, c := range field.Comment.List {
				if strings.HasPrefix(c.Text, annotation.Prefix) {
					b.warnf(b.fset.Position(c.Slash), "a //breaker: line after a method annotates nothing; put it on its own line above the method")
				}
			}
		}
		if len(ls) == 0 {
			continue
		}
		if len(field.Names) == 0 {
			b.errorf(ls[0].Pos, "//breaker: on an embedded interface or type term annotates nothing; annotate methods or the interface")
			continue
		}
		for _, l := range ls[1:] {
			b.errorf(l.Pos, "%s.%s: a method takes one //breaker: line (the first is at line %d)", ts.Name.Name, field.Names[0].Name, ls[0].Pos.Line)
		}
		out[field.Names[0].Name] = ls[0]
	}
	return out
}

func firstIsContext(sig *types.Signature) bool {
	if sig.Params().Len() == 0 {
		return false
	}
	return IsContext(sig.Params().At(0).Type())
}

// IsContext reports whether t is context.Context.
func IsContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func lastIsError(sig *types.Signature) bool {
	n := sig.Results().Len()
	if n == 0 {
		return false
	}
	t := sig.Results().At(n - 1).Type()
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// cgoFile reports the annotations of a cgo-processed file, which cannot be
// wrapped where they are.
func (b *builder) cgoFile(f *ast.File) {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, annotation.Prefix) {
				pos := b.fset.Position(c.Slash) // through cgo's //line directives
				if b.run.Sources[pos.Filename] {
					continue
				}
				b.errorf(pos, "interfaces in a file that imports \"C\" cannot be wrapped; move the interface to another file of the package")
				return
			}
		}
	}
}

// strayLines reports //breaker: lines in the doc comment of a declaration
// that is not a type: they annotate nothing.
func (b *builder) strayLines(doc *ast.CommentGroup, what string) {
	ls, _, _ := b.scan(doc, annotation.OnInterface)
	for _, l := range ls {
		b.errorf(l.Pos, "//breaker: on a %s declaration annotates nothing; annotate an interface", what)
	}
}

// ctxParam returns 1 + the index of the parameter that gives a method
// without a context.Context first parameter its ctx (0 for none), whether
// that parameter's type has WithContext(context.Context) returning the
// same type, and whether the parameter is itself a context.Context (see
// Method.CtxSelf). The first parameter whose type has a method Context()
// context.Context and a WithContext (an *http.Request) gives it: the
// wrapper can hand a deadline, or a hedge's cancel, back through it.
// Otherwise a first parameter whose type implements context.Context (an
// interface embedding it, a *gin.Context) is the ctx, when it can be
// checked for nil (a pointer, an interface or a type parameter: a struct
// that embeds a nil context.Context would panic in the breaker's own
// hands); otherwise the first parameter with Context() gives it.
func ctxParam(sig *types.Signature) (from int, with, self bool) {
	for i := range sig.Params().Len() {
		t := sig.Params().At(i).Type()
		f := methodOf(t, "Context")
		if f == nil {
			continue
		}
		s := f.Type().(*types.Signature)
		if s.Params().Len() != 0 || s.Results().Len() != 1 || !IsContext(s.Results().At(0).Type()) {
			continue
		}
		if w := methodOf(t, "WithContext"); w != nil {
			ws := w.Type().(*types.Signature)
			if ws.Params().Len() == 1 && IsContext(ws.Params().At(0).Type()) && !ws.Variadic() &&
				ws.Results().Len() == 1 && types.Identical(ws.Results().At(0).Type(), t) {
				return i + 1, true, false
			}
		}
		if from == 0 {
			from = i + 1 // the first with Context() alone, unless one takes a ctx back
		}
	}
	if sig.Params().Len() > 0 && selfContext(sig.Params().At(0).Type()) {
		return 1, false, true
	}
	return from, false, false
}

// selfContext reports whether t, a parameter's type, is a context.Context
// of its own type that the wrapper can use as the call's ctx: it
// implements context.Context, and a nil one can be told (see ctxParam).
func selfContext(t types.Type) bool {
	if !implementsContext(t) {
		return false
	}
	if _, ok := types.Unalias(t).(*types.TypeParam); ok {
		return true
	}
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface:
		return true
	}
	return false
}

// implementsContext reports whether t implements context.Context, whose
// Deadline() (time.Time, bool) it must have: time.Time is taken from that
// method, since the package declaring t need not import context or time.
func implementsContext(t types.Type) bool {
	d := methodOf(t, "Deadline")
	if d == nil {
		return false
	}
	res := d.Type().(*types.Signature).Results()
	if res.Len() != 2 {
		return false
	}
	tm, ok := types.Unalias(res.At(0).Type()).(*types.Named)
	if !ok || tm.Obj().Pkg() == nil || tm.Obj().Pkg().Path() != "time" || tm.Obj().Name() != "Time" {
		return false
	}
	return types.Implements(t, contextInterface(tm))
}

// contextInterface is context.Context spelled in go/types, with tm as
// time.Time.
func contextInterface(tm types.Type) *types.Interface {
	none := types.NewTuple()
	one := func(t types.Type) *types.Tuple { return types.NewTuple(types.NewParam(0, nil, "", t)) }
	anyType := types.Universe.Lookup("any").Type()
	method := func(name string, params, results *types.Tuple) *types.Func {
		return types.NewFunc(0, nil, name, types.NewSignatureType(nil, nil, nil, params, results, false))
	}
	return types.NewInterfaceType([]*types.Func{
		method("Deadline", none, types.NewTuple(types.NewParam(0, nil, "", tm), types.NewParam(0, nil, "", types.Typ[types.Bool]))),
		method("Done", none, one(types.NewChan(types.RecvOnly, types.NewStruct(nil, nil)))),
		method("Err", none, one(errorType)),
		method("Value", one(anyType), one(anyType)),
	}, nil).Complete()
}

// methodOf returns the method called name of t's method set, or nil.
func methodOf(t types.Type, name string) *types.Func {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	f, _ := obj.(*types.Func)
	return f
}

// sqlHandles returns the results of sig that hold a connection of
// database/sql's pool (see Method.Handles).
func sqlHandles(sig *types.Signature) []Handle {
	var hs []Handle
	for i := range sig.Results().Len() {
		for _, h := range sqlHandleTypes {
			if isNamedPtr(sig.Results().At(i).Type(), "database/sql", h.Type) {
				h.Index = i
				hs = append(hs, h)
			}
		}
	}
	return hs
}

// redisConns returns the indexes of sig's results that hold a
// connection of go-redis (see Method.Conns).
func redisConns(sig *types.Signature) []int {
	var is []int
	for i := range sig.Results().Len() {
		t := sig.Results().At(i).Type()
		for _, path := range redisPaths {
			if isNamedPtr(t, path, "PubSub") || isNamedPtr(t, path, "Conn") {
				is = append(is, i)
				break
			}
		}
	}
	return is
}

// redisPaths are the import paths of go-redis whose *PubSub and *Conn
// hold a connection until closed.
var redisPaths = []string{"github.com/redis/go-redis/v9", "github.com/go-redis/redis/v8"}

// sqlHandleTypes are database/sql's types of Method.Handles, and how each
// is released.
var sqlHandleTypes = []Handle{{Type: "Rows", Release: "Close"}, {Type: "Conn", Release: "Close"}, {Type: "Stmt", Release: "Close"}, {Type: "Tx", Release: "Rollback"}}

// responseResult returns 1 + the index of a *net/http.Response result, or
// 0.
func responseResult(sig *types.Signature) int {
	for i := range sig.Results().Len() {
		if isNamedPtr(sig.Results().At(i).Type(), "net/http", "Response") {
			return i + 1
		}
	}
	return 0
}

// requestParam returns 1 + the index of the first *net/http.Request
// parameter, or 0.
func requestParam(sig *types.Signature) int {
	for i := range sig.Params().Len() {
		if isNamedPtr(sig.Params().At(i).Type(), "net/http", "Request") {
			return i + 1
		}
	}
	return 0
}

// requests counts the *net/http.Request parameters of sig.
func requests(sig *types.Signature) int {
	n := 0
	for i := range sig.Params().Len() {
		if isNamedPtr(sig.Params().At(i).Type(), "net/http", "Request") {
			n++
		}
	}
	return n
}

// isNamedPtr reports whether t is *path.name.
func isNamedPtr(t types.Type, path, name string) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == path && n.Obj().Name() == name
}

// misses are the Err() values of known clients that report no failure:
// go-redis's redis.Nil is a missing key, an answer.
var misses = map[string]string{"github.com/redis/go-redis/v9": "Nil"}

// answers are the errors of known clients that a method with a plain
// error result returns for an answer of a healthy server, by the path of
// the client's package (see Method.Answers). go-redis's Pipelined and
// TxPipelined return the first failed command's error, and Process the
// command's: redis.Nil when a GET missed; Watch returns
// redis.TxFailedErr when a watched key changed before EXEC (an
// optimistic lock lost), and so do TxPipelined and a Pipeliner's Exec
// inside it. A command's Err() never holds TxFailedErr when the command
// returns: only the commands queued in a transaction get it, at EXEC, so
// a command's Miss stays redis.Nil alone.
//
// database/sql's ErrTxDone is what a *sql.Tx's Rollback returns after
// its Commit (the deferred Rollback of database/sql's idiom), and any
// call on a transaction already ended: the caller's order of calls, not
// the database's health.
var answers = map[string][]answer{
	"github.com/redis/go-redis/v9": {
		{"Nil", "a missing key", false},
		{"TxFailedErr", "a watched key changed", false},
	},
	"database/sql": {
		{"ErrTxDone", "a transaction already ended", true},
	},
}

type answer struct {
	name, what string
	tx         bool // only a transaction's: of an interface with Commit() error or Rollback() error
}

// clientAnswers returns the answers (see Method.Answers) of a method of
// the known clients pkgs (clientPackages: those whose package declares a
// type the method's signature spells, in a parameter or a result, or
// inside one, a func's parameters, a slice's elements), with a plain
// error result; tx says whether the interface is a transaction's (it has
// Commit() error or Rollback() error), whose answers a transaction alone
// gives need.
func clientAnswers(pkgs []*types.Package, tx bool) []Answer {
	var out []Answer
	for _, pkg := range pkgs {
		out = append(out, packageAnswers(pkg, tx)...)
	}
	return out
}

// packageAnswers is clientAnswers of one package.
func packageAnswers(pkg *types.Package, tx bool) []Answer {
	var out []Answer
	for _, a := range answers[pkg.Path()] {
		if a.tx && !tx {
			continue
		}
		switch v := pkg.Scope().Lookup(a.name).(type) {
		case *types.Var, *types.Const:
			out = append(out, Answer{Ref: Ref{Path: pkg.Path(), Name: v.Name(), Text: pkg.Name() + "." + v.Name()}, What: a.what})
		}
	}
	return out
}

// clientPackages returns the packages of answers that declare a named
// type t spells (not the types that type is made of), in the order first
// met, each once: a method may spell two known clients' types (a
// *sql.Tx and a redis.Cmdable), and has both clients' answers.
func clientPackages(t types.Type) []*types.Package {
	var out []*types.Package
	seen := map[types.Type]bool{}
	var walk func(t types.Type)
	walk = func(t types.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		switch u := types.Unalias(t).(type) {
		case *types.Named:
			if p := u.Obj().Pkg(); p != nil && answers[p.Path()] != nil && !slices.Contains(out, p) {
				out = append(out, p)
			}
			for a := range u.TypeArgs().Types() {
				walk(a)
			}
		case *types.Pointer:
			walk(u.Elem())
		case *types.Slice:
			walk(u.Elem())
		case *types.Array:
			walk(u.Elem())
		case *types.Map:
			walk(u.Key())
			walk(u.Elem())
		case *types.Chan:
			walk(u.Elem())
		case *types.Signature:
			for _, tup := range []*types.Tuple{u.Params(), u.Results()} {
				for v := range tup.Variables() {
					walk(v.Type())
				}
			}
		case *types.Struct:
			for f := range u.Fields() {
				walk(f.Type())
			}
		}
	}
	walk(t)
	return out
}

// localMethod reports whether m, of signature sig, is a local method of
// go-redis: one that comes from an interface of go-redis embedded in the
// user's (its *types.Func is go-redis's), and that takes no ctx (no
// parameter is or gives a context.Context). go-redis's client interfaces
// (v8 and v9) take a context.Context first in every method that sends a
// command to Redis; one of their own without builds or returns something
// locally (Pipeline, TxPipeline, AutoPipeline, AsyncAutoPipeline: a
// pipeliner; PoolStats, AddHook), and its error, when it has one, is the
// client's own answer (a *redis.Ring's "AutoPipeline is not supported"),
// not Redis failing. Guarded, such a method would count that answer as a
// failure of the breaker of every command, and be refused by an OPEN one
// while nothing goes to Redis.
//
// A method the user's interface declares is the user's, and guarded like
// any other, whatever types it spells and whatever go-redis method it
// looks like: a Get(key string) *redis.StringCmd over a client with
// context.Background() sends a command, a search builder's Run() (which
// keeps its ctx) sends one, a Result() of the user's may read Redis. A
// user who redeclares a local method of go-redis's writes
// //breaker:skip above it (the warning about methods delegated unguarded
// says so).
func localMethod(m *types.Func, sig *types.Signature) bool {
	for v := range sig.Params().Variables() {
		t := v.Type()
		if IsContext(t) || implementsContext(t) || methodOf(t, "Context") != nil {
			return false
		}
	}
	return m.Pkg() != nil && isRedisPath(m.Pkg().Path())
}

// isRedisPath reports whether path is one of redisPaths or a package
// inside one of them.
func isRedisPath(path string) bool {
	for _, p := range redisPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// carrier returns how the last result of sig carries the call's error,
// or nil: nil with no problem when it has no method Err() error (or is a
// context.Context, whose Err is its own state), nil with a problem when it
// has one but a refusal cannot be made of it.
func carrier(sig *types.Signature, qual types.Qualifier) (*Carrier, string) {
	n := sig.Results().Len()
	if n == 0 {
		return nil, ""
	}
	t := sig.Results().At(n - 1).Type()
	if IsContext(t) {
		return nil, ""
	}
	f := methodOf(t, "Err")
	if f == nil {
		return nil, ""
	}
	fs := f.Type().(*types.Signature)
	if fs.Params().Len() != 0 || fs.Results().Len() != 1 || !types.Identical(fs.Results().At(0).Type(), types.Universe.Lookup("error").Type()) {
		return nil, ""
	}
	ts := types.TypeString(t, qual)
	if isNamedPtr(t, "database/sql", "Row") {
		return &Carrier{Type: t, Refuse: CarrySQLRow}, ""
	}
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return nil, "its last result " + ts + " carries its error in Err() but is not a pointer a refusal can be made in"
	}
	if _, ok := p.Elem().Underlying().(*types.Interface); ok {
		return nil, "its last result " + ts + " points to an interface"
	}
	set := methodOf(t, "SetErr")
	if set == nil {
		return nil, "its last result " + ts + " carries its error in Err() but has no SetErr(error)"
	}
	ss := set.Type().(*types.Signature)
	if ss.Params().Len() != 1 || ss.Results().Len() != 0 || !types.Identical(ss.Params().At(0).Type(), types.Universe.Lookup("error").Type()) {
		return nil, "its last result " + ts + " has a SetErr that is not func(error)"
	}
	c := &Carrier{Type: t, Refuse: CarrySetErr}
	if nt, ok := types.Unalias(p.Elem()).(*types.Named); ok && nt.Obj().Pkg() != nil {
		pkg := nt.Obj().Pkg()
		if name, ok := misses[pkg.Path()]; ok {
			switch v := pkg.Scope().Lookup(name).(type) {
			case *types.Var, *types.Const:
				c.Miss = &Ref{Path: pkg.Path(), Name: v.Name(), Text: pkg.Name() + "." + v.Name()}
			}
		}
	}
	return c, ""
}

// commandsResult returns the Commands of a method of signature sig with
// a plain error result, or nil: its first result, but the error, that is
// a slice of a known client's commands, a named type of a package of
// misses with a method Err() error (go-redis's []redis.Cmder).
func commandsResult(sig *types.Signature) *Commands {
	n := sig.Results().Len()
	if !lastIsError(sig) {
		return nil
	}
	for i := range n - 1 {
		sl, ok := types.Unalias(sig.Results().At(i).Type()).(*types.Slice)
		if !ok {
			continue
		}
		nt, ok := types.Unalias(sl.Elem()).(*types.Named)
		if !ok || nt.Obj().Pkg() == nil || !hasErr(nt) {
			continue
		}
		pkg := nt.Obj().Pkg()
		name, ok := misses[pkg.Path()]
		if !ok {
			continue
		}
		switch v := pkg.Scope().Lookup(name).(type) {
		case *types.Var, *types.Const:
			return &Commands{Index: i, Miss: Ref{Path: pkg.Path(), Name: v.Name(), Text: pkg.Name() + "." + v.Name()}}
		}
	}
	return nil
}

// hasErr reports whether t has a method Err() error.
func hasErr(t types.Type) bool {
	f := methodOf(t, "Err")
	if f == nil {
		return false
	}
	fs := f.Type().(*types.Signature)
	return fs.Params().Len() == 0 && fs.Results().Len() == 1 && types.Identical(fs.Results().At(0).Type(), types.Universe.Lookup("error").Type())
}

// pkgQualifier names the packages of types in messages: by name, and not
// at all for local, the interface's own.
func pkgQualifier(local *types.Package) types.Qualifier {
	return func(p *types.Package) string {
		if p == local {
			return ""
		}
		return p.Name()
	}
}
