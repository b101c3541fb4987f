package main

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/model"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/render"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/write"
)

// errReported is an error whose details run already printed to stderr.
var errReported = errors.New("breakergen: failed")

// errUsage is a command line error; the usage was printed.
var errUsage = errors.New("breakergen: bad usage")

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

// usageHead and usageTail are the usage text (-h) around its table of keys,
// which comes from the one table of keys (annotation.UsageTable).
const usageHead = `usage: breakergen [-type A,B] [-tags TAGS] [-check] [-strict] [packages]

breakergen writes circuit-breaker wrappers for the Go interfaces annotated
with //breaker: lines in the packages named (default "."). The wrappers of
the interfaces declared in f.go go to f_breaker.go beside it: for each
interface X, a type XBreaker implementing X and NewXBreaker(next X, reg
*runtime.Registry) *XBreaker, and, when a line of X carries the flag chain,
a fallback chain XChain with NewXChain(primary X, reg *runtime.Registry,
fallbacks ...runtime.Fallback[X]).

    //go:generate go tool breakergen

    //breaker:name=quotes threshold=5 reset=30s ratelimit=10/20
    //breaker:name=search methods=Search* timeout=2s exclude=ErrNotFound
    type Source interface {
        Quote(ctx context.Context, code string) (Quote, error) // quotes
        Search(ctx context.Context, q string) ([]Hit, error)   // search
        //breaker:skip
        Ping(ctx context.Context) error                        // unguarded
    }

Keys (no space after //, options separated by spaces):
`

const usageTail = `
A method's own line wins, then the first interface line whose methods match,
then the default line. A method is guarded when its last result is an error
or carries one (an Err() error method, as go-redis commands and *sql.Row
have); others are delegated unguarded, with a warning.

Errors are printed as file:line:col: message; nothing is written then, and
the exit status is 1 (2 for a bad command line). Warnings (annotations
that do nothing, methods left unguarded) are printed as file:line:col:
warning: message; with -strict they are errors too. The manual:
"go doc github.com/breakergen/breakergen/cmd/breakergen".

Flags:
`

// options are the parsed command line.
type options struct {
	types    []string
	tags     string
	check    bool
	strict   bool
	patterns []string
	dir      string // working directory for tests; "" is the current one
	env      []string
}

// getenv is os.Getenv, or the last value of key in o.env when a test gave
// one.
func (o *options) getenv(key string) string {
	if o.env == nil {
		return os.Getenv(key)
	}
	v := ""
	for _, kv := range o.env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func parseArgs(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("breakergen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	typeList := fs.String("type", "", "comma-separated interface `names` to generate; default: every annotated interface")
	tags := fs.String("tags", "", "comma-separated build `tags` to load the packages with")
	check := fs.Bool("check", false, "write nothing; exit non-zero naming every file that would change (for CI)")
	strict := fs.Bool("strict", false, "treat every warning as an error: exit non-zero and write nothing")
	fs.Usage = func() {} // -h gets the manual, a mistake one line (below)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usageHead+annotation.UsageTable()+usageTail)
			fs.PrintDefaults()
			return nil, err
		}
		// The flag package printed the mistake; a hint and the synopsis
		// follow, not the hundred lines of the manual.
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			if c := annotation.Closest(name, names); c != "" {
				fmt.Fprintf(stderr, "did you mean -%s?\n", c)
			}
		}
		synopsis, _, _ := strings.Cut(usageHead, "\n")
		fmt.Fprintf(stderr, "%s\n(breakergen -h prints the manual)\n", synopsis)
		return nil, errUsage
	}
	o := &options{tags: *tags, check: *check, strict: *strict, patterns: fs.Args()}
	for _, t := range strings.Split(*typeList, ",") {
		if t = strings.TrimSpace(t); t != "" {
			o.types = append(o.types, t)
		}
	}
	// -type= (an unset variable in a go:generate line, say) names nothing:
	// an error, not every annotated interface.
	typeGiven := false
	fs.Visit(func(f *flag.Flag) { typeGiven = typeGiven || f.Name == "type" })
	if typeGiven && len(o.types) == 0 {
		fmt.Fprintf(stderr, "breakergen: -type %q names no interface; omit -type to generate every annotated interface\n", *typeList)
		return nil, errUsage
	}
	if len(o.patterns) == 0 {
		o.patterns = []string{"."}
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "sim" {
		return runSim(args[1:], os.Stdin, stdout, stderr) // sim.go
	}
	if len(args) == 1 && (args[0] == "help" || args[0] == "--help") {
		// As the go command's: help is no package here, nor in std.
		args = []string{"-h"}
	}
	o, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return generate(o, stdout, stderr)
}

// fileArgs reports arguments that name Go files rather than packages
// (mockgen's habit of //go:generate mockgen -source=$GOFILE, carried
// over): a usage error that says what to write instead. As for the go
// command, an argument is a file when it ends in ".go" and names one. One
// that names nothing is a file that does not exist (a //go:generate line
// naming a file renamed since) when it is a local path, or when the
// directory it would be in exists; else it is an import path
// (github.com/nats-io/nats.go), left to the go command.
func fileArgs(o *options, stderr io.Writer) error {
	var files, dirs, types, missing, missingDirs []string
	for _, arg := range o.patterns {
		path := arg
		if !filepath.IsAbs(path) && o.dir != "" {
			path = filepath.Join(o.dir, path)
		}
		if !strings.HasSuffix(arg, ".go") || strings.Contains(arg, "...") {
			continue
		}
		fi, err := os.Stat(path)
		if err != nil {
			local := strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, "../") || filepath.IsAbs(arg)
			if !errors.Is(err, fs.ErrNotExist) || !local && !isDir(filepath.Dir(path)) {
				continue // an import path that ends in .go
			}
			missing = append(missing, arg)
			if dir := argDir(arg); !slices.Contains(missingDirs, dir) {
				missingDirs = append(missingDirs, dir)
			}
			continue
		}
		if fi.IsDir() {
			continue // a pattern that ends in .go
		}
		files = append(files, arg)
		if dir := argDir(arg); !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
		for _, t := range annotatedTypes(path) {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	if len(files) == 0 && len(missing) == 0 {
		return nil
	}
	if len(files) > 0 {
		pkgs := strings.Join(dirs, " ")
		what := "its package"
		if len(dirs) > 1 {
			what = "their packages"
		}
		only := "and -type A,B to select interfaces"
		if len(types) > 0 {
			only = fmt.Sprintf("or, for the wrappers of the interfaces in %s only, -type %s %s", strings.Join(files, ", "), strings.Join(types, ","), pkgs)
		}
		fmt.Fprintf(stderr, "breakergen: %s: breakergen takes packages, not files: write %s (%s), %s\n", strings.Join(files, ", "), pkgs, what, only)
		if gofile := o.getenv("GOFILE"); gofile != "" && slices.Contains(files, gofile) {
			fmt.Fprintln(stderr, "breakergen: in the //go:generate line, write . in place of $GOFILE")
		}
	}
	if len(missing) > 0 {
		such, what := "no such file", "the package of its directory"
		switch {
		case len(missingDirs) > 1:
			such, what = "no such files", "the packages of their directories"
		case len(missing) > 1:
			such, what = "no such files", "the package of their directory"
		}
		fmt.Fprintf(stderr, "breakergen: %s: %s; breakergen takes packages, not files: write %s (%s), and -type A,B to select interfaces\n", strings.Join(missing, ", "), such, strings.Join(missingDirs, " "), what)
	}
	return errUsage
}

// argDir returns the package pattern of the directory of the file arg
// names: "." for s.go, ./x for x/s.go, ../x for ../x/s.go.
func argDir(arg string) string {
	dir := filepath.ToSlash(filepath.Dir(arg))
	if dir != "." && dir != ".." && !filepath.IsAbs(arg) && !strings.HasPrefix(dir, "../") {
		dir = "./" + dir
	}
	return dir
}

// isDir reports whether path names a directory.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// annotatedTypes returns the names of the types of the Go file whose doc
// comment holds a //breaker: line, for fileArgs's hint; none when the file
// does not parse.
func annotatedTypes(path string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	annotated := func(cg *ast.CommentGroup) bool {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//breaker:") {
				return true
			}
		}
		return false
	}
	var names []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if ts.Doc != nil && annotated(ts.Doc) || gd.Doc != nil && !gd.Lparen.IsValid() && annotated(gd.Doc) {
				names = append(names, ts.Name.Name)
			}
		}
	}
	return names
}

func generate(o *options, stdout, stderr io.Writer) error {
	if err := fileArgs(o, stderr); err != nil {
		return err
	}
	res, err := load.Load(load.Config{Dir: o.dir, Patterns: o.patterns, Tags: o.tags, Env: o.env})
	if err != nil {
		return err
	}
	m := model.Build(res, model.Options{Types: o.types, Tags: o.tags, Env: o.env})
	cwd := o.dir
	if cwd == "" {
		cwd, _ = filepath.Abs(".")
	}
	rel := func(p string) string {
		if r, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return p
	}
	for _, w := range m.Warnings {
		w.Pos.Filename = rel(w.Pos.Filename)
		w.Msg = strings.ReplaceAll(w.Msg, cwd+string(filepath.Separator), "")
		fmt.Fprintln(stderr, w)
	}
	if len(m.Errors) > 0 {
		for _, e := range m.Errors {
			if e.Pos.Filename != "" {
				e.Pos.Filename = rel(e.Pos.Filename)
			}
			e.Msg = strings.ReplaceAll(e.Msg, cwd+string(filepath.Separator), "")
			fmt.Fprintln(stderr, e)
		}
		return errReported
	}
	if o.strict && len(m.Warnings) > 0 {
		fmt.Fprintf(stderr, "breakergen: -strict: %s treated as errors; nothing written\n", plural(len(m.Warnings), "warning"))
		return errReported
	}
	outputs, err := renderAll(m.Files)
	if err != nil {
		return err
	}
	changes, blocked, err := write.Plan(outputs, res.Outputs, m.Sources, len(o.types) > 0)
	if err != nil {
		fmt.Fprintln(stderr, strings.ReplaceAll(err.Error(), cwd+string(filepath.Separator), ""))
		return errReported
	}
	// A file breakergen did not write is never overwritten. Then nothing
	// is written (no partial output); -check names every such file beside
	// every output out of date.
	inTheWay := blockedErrors(blocked, m.Files, rel)
	if len(inTheWay) > 0 && !o.check {
		for _, e := range inTheWay {
			fmt.Fprintln(stderr, e)
		}
		fmt.Fprintln(stderr, "breakergen: nothing written")
		return errReported
	}
	// go generate fails on a file of the package that disappears while it
	// runs (it lists the files first): under it, an output to remove is
	// emptied instead, and -check accepts an emptied one.
	generating := o.getenv("GOFILE") != ""
	changes, emptied := write.UnderGenerate(changes, generating, o.check)
	if !o.check {
		for _, p := range emptied {
			why := "nothing is annotated for it any more"
			if to := load.OutputOf(load.SourceOf(p)); to != p {
				why = "its wrappers go to " + rel(to) + " now, which keeps its source's platform"
			}
			fmt.Fprintf(stderr, "%s: %s: emptied, not removed, since go generate fails on a file removed while it runs; delete it, or run breakergen outside go generate, which removes it\n", rel(p), why)
		}
	}
	if o.check && len(res.Excluded) > 0 {
		// Not stale as far as this run knows: not checked at all. Say so,
		// or a tagged file goes stale under a passing check.
		var names []string
		for _, p := range res.Excluded {
			n := rel(p)
			if c := load.ConstraintOf(p); c != "" {
				n += " (" + c + ")"
			}
			names = append(names, n)
		}
		fmt.Fprintf(stderr, "breakergen: not checked, as this run's tags, GOOS and GOARCH leave them and their sources out: %s; check them with breakergen -check and the -tags, GOOS or GOARCH they build with\n",
			strings.Join(names, ", "))
	}
	if o.check {
		for _, c := range changes {
			verb := "would be written"
			if c.Remove {
				verb = "would be removed"
			}
			fmt.Fprintf(stderr, "%s: %s\n", rel(c.Path), verb)
		}
		for _, e := range inTheWay {
			fmt.Fprintln(stderr, e)
		}
		if len(inTheWay) > 0 {
			fmt.Fprintf(stderr, "breakergen: %s in the way of generated files; breakergen writes nothing until each is renamed or its interfaces move\n", plural(len(inTheWay), "file"))
		}
		if len(changes) > 0 {
			// go generate writes nothing while a file is in the way.
			when := ""
			switch len(inTheWay) {
			case 0:
			case 1:
				when = " once the file in the way is renamed or its interfaces move"
			default:
				when = fmt.Sprintf(" once the %d files in the way are renamed or their interfaces move", len(inTheWay))
			}
			if o.tags != "" {
				// go generate passes no -tags to the commands it runs:
				// its advice would write nothing of these.
				fmt.Fprintf(stderr, "breakergen: %d generated file(s) out of date; run breakergen -tags %s %s%s (go generate passes no -tags to breakergen: give the tags in the //go:generate line)\n",
					len(changes), o.tags, strings.Join(o.patterns, " "), when)
			} else {
				fmt.Fprintf(stderr, "breakergen: %d generated file(s) out of date; run go generate%s\n", len(changes), when)
			}
			// go generate does nothing in a package with no go:generate
			// line that runs breakergen: say so, or the advice loops.
			seen := map[string]bool{}
			for _, c := range changes {
				if d := filepath.Dir(c.Path); !seen[d] {
					seen[d] = true
					if !runsBreakergen(d) {
						fmt.Fprintf(stderr, "breakergen: %s: no //go:generate line in its files runs breakergen, so go generate does nothing there; add one, e.g. //go:generate go tool breakergen\n", rel(d))
					}
				}
			}
		}
		if len(changes) > 0 || len(inTheWay) > 0 {
			return errReported
		}
		return nil
	}
	if err := write.Apply(changes); err != nil {
		return err
	}
	unrequired(o, res, changes, stderr)
	return nil
}

// runtimeModule is the module whose runtime generated code imports.
const runtimeModule = "github.com/breakergen/breakergen"

// unrequired warns, once a module, when a module that breakergen just
// wrote outputs in does not mention runtimeModule in its go.mod (nor a
// go.work lists modules): the outputs import its runtime, and the go
// command's own advice then, go get, fetches the latest, which need not
// match this generator. It names this generator's version when it has one.
func unrequired(o *options, res *load.Result, changes []write.Change, stderr io.Writer) {
	written := map[string]bool{}
	for _, c := range changes {
		if !c.Remove {
			written[filepath.Dir(c.Path)] = true
		}
	}
	seen := map[string]bool{}
	for _, p := range res.Packages {
		m := p.Module
		if m == nil || m.GoMod == "" || m.Path == runtimeModule || seen[m.GoMod] || len(p.GoFiles) == 0 || !written[filepath.Dir(p.GoFiles[0])] {
			continue
		}
		seen[m.GoMod] = true
		if data, err := os.ReadFile(m.GoMod); err != nil || mentions(string(data), runtimeModule) {
			continue
		}
		if workFile(o) != "" {
			return // a workspace may provide it: the go command will say
		}
		get := "require the " + runtimeModule + " this breakergen was built from (go get " + runtimeModule + "@its version, or a replace)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == runtimeModule && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			get = "run go get " + runtimeModule + "@" + bi.Main.Version + " in it, this breakergen's version"
		}
		fmt.Fprintf(stderr, "breakergen: module %s does not require %s, whose runtime the generated code imports: %s; the go command's own advice, go get without a version, fetches the latest, which need not match the generator\n",
			m.Path, runtimeModule, get)
	}
}

// mentions reports whether the go.mod text gomod names module path as a
// module (in a require, a replace or a tool line), not as the start of
// another's path (its redisstate module's).
func mentions(gomod, path string) bool {
	for _, f := range strings.FieldsFunc(gomod, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '(' || r == ')' }) {
		if f == path || strings.HasPrefix(f, path+"/") && !isModuleOfItsOwn(f) {
			return true
		}
	}
	return false
}

// isModuleOfItsOwn reports whether path, under runtimeModule, is one of its
// modules of their own (redisstate, the exporters, ...), which require
// none of the runtime's packages for the generated code.
func isModuleOfItsOwn(path string) bool {
	for _, m := range []string{"redisstate", "exporters/prometheus", "exporters/otel"} {
		if path == runtimeModule+"/"+m {
			return true
		}
	}
	return false
}

// workFile returns the go.work file the go command uses in the run's
// directory, with its environment, or "".
func workFile(o *options) string {
	switch w := o.getenv("GOWORK"); w {
	case "off":
		return ""
	case "":
	default:
		return w
	}
	cmd := exec.Command("go", "env", "GOWORK")
	cmd.Dir, cmd.Env = o.dir, o.env // nil: the process's
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// blockedErrors says, for each output whose path holds a file breakergen
// did not write (blocked), which interfaces want it, at the first of them,
// and what to do; sorted. rel shortens the paths.
func blockedErrors(blocked []string, files []*model.File, rel func(string) string) []*annotation.Error {
	var errs []*annotation.Error
	for _, path := range blocked {
		out := rel(path)
		i := slices.IndexFunc(files, func(f *model.File) bool { return f.Path == path })
		if i < 0 || len(files[i].Interfaces) == 0 {
			errs = append(errs, annotation.Errorf(token.Position{}, "%s: exists and was not generated by breakergen; not overwriting it: rename it", out))
			continue
		}
		var names []string
		pos := files[i].Interfaces[0].Pos
		for _, in := range files[i].Interfaces {
			names = append(names, in.Name)
			if in.Pos.Offset < pos.Offset {
				pos = in.Pos
			}
		}
		pos.Filename = rel(pos.Filename)
		whose, what := "its", names[0]
		if len(names) > 1 {
			whose, what = "their", "them"
		}
		errs = append(errs, annotation.Errorf(pos, "%s: %s wrappers go to %s, which exists and was not generated by breakergen, so it is not overwritten: rename %s, or move %s to another file", strings.Join(names, ", "), whose, out, out, what))
	}
	annotation.SortErrors(errs)
	return errs
}

// runsBreakergen reports whether go generate runs breakergen over dir: a
// //go:generate line naming breakergen in one of its .go files, or one
// naming it with a "..." pattern in a directory above it, up to its
// module's root.
func runsBreakergen(dir string) bool {
	if generateLine(dir, false) {
		return true
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return false // the module's root: no line above it runs here
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		if d = parent; generateLine(d, true) {
			return true
		}
	}
}

// generateLine reports whether a .go file of dir has a //go:generate line
// that names breakergen (and a "..." pattern, when tree).
func generateLine(dir string, tree bool) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			if strings.HasPrefix(line, "//go:generate ") && strings.Contains(line, "breakergen") && (!tree || strings.Contains(line, "...")) {
				return true
			}
		}
	}
	return false
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// renderAll renders the files in parallel: each is independent, and
// formatting dominates the time of a large run.
func renderAll(files []*model.File) (map[string][]byte, error) {
	data := make([][]byte, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, goruntime.GOMAXPROCS(0))
	for i, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			data[i], errs[i] = render.File(f)
		}()
	}
	wg.Wait()
	outputs := map[string][]byte{}
	for i, f := range files {
		if errs[i] != nil {
			return nil, errs[i]
		}
		outputs[f.Path] = data[i]
	}
	return outputs, nil
}
