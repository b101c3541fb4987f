// Package ifacegen writes random Go packages of //breaker:-annotated
// interfaces for breakergen's fuzzer, one package per seed (math/rand/v2's
// PCG seeded with it), each with a test, written here too, that checks
// that every method of every generated wrapper (and chain) forwards every
// argument and result unchanged (a carrier: the same pointer), with the
// upstream answering successfully where a failure would make the wrapper
// try again or ask another source, and that a route's valid or failure
// func judged an answer that came without an error.
//
// The interfaces cover the shapes of SPEC §3 and GENERATOR-CASES.md:
// generics with constraints; embedded interfaces of the same package,
// another package of the module (under a path such as rand, store/v2 or
// go-store) and the standard library, overlapping ones included;
// variadics (...any, and inside func-typed parameters); func- and
// chan-typed parameters (chan (<-chan T) too); aliases (any, a local
// alias, os.DirEntry, an alias into an internal package); imports with one
// name (text/template and html/template, math/rand and math/rand/v2);
// unnamed, _ and colliding parameter names; named and multiple results;
// methods with and without ctx and error; interface and method lines with
// methods globs, skip, timeout, exclude, shared names, the chain flag, and
// window and load keys that never refuse a call; type groups, annotated
// aliases and defined types; top-level names of the package that shadow
// imports (runtime, context, time).
//
// Judged methods (SPEC §6 and §12, judged.go), in the interfaces and in
// what they embed: a last result that carries its error (a carrier of
// the package, a generic one, one of the other package whose Err and
// SetErr are promoted from an embedded struct, *sql.Row), alone or after
// other results, beside a parameter named like its package or type;
// methods of an *http.Response and an error, some of an *http.Request
// alone; failure= and valid= funcs of the package, of the results' own
// types or of any, named like the wrapper's locals and imports
// (parameters take those names too); stale= (and stalesize=) where the
// arguments are comparable; attempts=, backoff= and budget=; with and
// without the chain flag. An interface line gets failure, valid or stale
// only when it fits every method it routes, once the methods of the
// interface's own that it does not fit clear it on their lines
// (failure=-, valid=-, stale=0). valid and stale reach methods that are
// not judged too.
//
// Breakers per key and hedged chains (SPEC §15 and §9, keys.go): key= on
// interface and method lines whose methods get a parameter that may key
// (a string or integer kind, a named one, a fmt.Stringer, a type
// parameter constrained by it), with keys= and maxopen=, on chains and
// judged methods too; key=- with a name of its own on a method a keyed
// line would route but cannot. The test looks each key's breaker up in
// the registry, and trips one key alone where the name allows it. hedge=
// (and hedges=) on chain lines, most often where they reach judged
// methods and methods returning an *http.Response or a *sql.Row.
//
// Every package is valid Go whatever the seed; a seed that yields
// something the compiler rejects is a bug of this package. Forms that
// show a known generator bug (KnownBugs) are avoided unless
// Options.Reproduce names it.
package ifacegen

import (
	"fmt"
	"go/format"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Package is what one seed yields.
type Package struct {
	// Dir is the package's directory, relative to the module root.
	Dir string
	// Files are the files to write (the package, the other package of
	// the module it uses, and the forwarding test), by slash path
	// relative to the module root.
	Files map[string][]byte
	// Interfaces are the annotated interfaces, in declaration order.
	Interfaces []string
}

// Chains says which interfaces breakergen writes a fallback chain for.
type Chains int

const (
	// ChainsEvery: every annotated interface has an XChain.
	ChainsEvery Chains = iota
	// ChainsFlag: the interfaces whose line carries the chain flag
	// (SPEC §6) have one; Generate gives the flag to some.
	ChainsFlag
)

// Options are what Generate may vary beside the seed.
type Options struct {
	// Chains is how the breakergen under test decides on chains.
	Chains Chains
	// Reproduce names the known bugs (KnownBugs) whose forms the package
	// may show; it avoids the others.
	Reproduce []string
}

// KnownBugs names the generator bugs the fuzzer found that are not fixed
// yet: Generate avoids their forms unless Options.Reproduce names them,
// each with a seed that shows it (BREAKERGEN_FUZZ_BUGS=all
// BREAKERGEN_FUZZ_SEEDS=N go test -run TestGenerateSeeds
// ./cmd/breakergen); those past 20 are in FuzzGenerate's corpus. None is
// open. Fixed: a valid or failure func named w or c, like the wrapper's or
// the chain's receiver (seed 42); a judged method with stale and no ctx
// (seed 11); a name declared in an annotated _test.go file that an import
// of a wrapper took (seed 3); a keyed method with a timeout and a
// parameter named time, which hid the package its body spells the timeout
// with (seed 585).
var KnownBugs []string

// Generate writes the package of seed into a module whose path is modPath.
func Generate(modPath string, seed uint64, o Options) (*Package, error) {
	g := newGen(modPath, seed, o)
	g.build(modPath)
	return g.write()
}

// newGen is the generator of seed's package, before it is built.
func newGen(modPath string, seed uint64, o Options) *gen {
	g := &gen{
		opts:     o,
		r:        rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		rLoad:    rand.New(rand.NewPCG(seed, 0x77696e646f77)),
		rJudge:   rand.New(rand.NewPCG(seed, 0x6a7564676564)),
		rKey:     rand.New(rand.NewPCG(seed, 0x6b657973)),
		seed:     seed,
		dir:      "s" + strconv.FormatUint(seed, 10),
		reserved: map[string]bool{},
		settings: map[string]bool{},
		limited:  map[string]bool{},
	}
	g.local = &pkg{modPath + "/" + g.dir, ""}
	return g
}

type gen struct {
	opts Options
	r    *rand.Rand
	// rLoad draws the window and load keys, so that adding them left the
	// interfaces of every earlier seed (and the corpus) as they were.
	rLoad *rand.Rand
	// rJudge draws what makes methods judged (judged.go), so that adding
	// them left the interfaces of the seeds that draw none as they were.
	rJudge *rand.Rand
	// rKey draws key and hedge (keys.go), for the same reason.
	rKey *rand.Rand
	seed uint64
	dir  string

	local, dep *pkg
	depDir     string
	reserved   map[string]bool // the local package's top-level names that are also import names

	localTypes, depTypes   []*named
	localIfaces, depIfaces []*iface // embedding targets
	annotated              []*iface
	localErrs, depErrs     []string

	// Lazily declared types.
	t0, pair, opt, id, ctxAlias, code, ints, timeT, rcAlias, number *named
	item, box, level, handle, depKeyT                               *named
	cmd, reply, dcmd                                                *named // carriers
	sym, tagT                                                       *named // key types

	keyFams  map[string]*keyFam // keyed breaker names
	keyNames int                // fresh names given to keyed lines

	judgePool []string     // the names valid and failure funcs take, in order
	funcs     []*judgeFunc // valid and failure funcs

	methodCount int
	names       []string        // breaker names given so far
	settings    map[string]bool // breaker names whose settings were given
	limited     map[string]bool // breaker names with a ratelimit
	files       int             // source files of the local package
	keys        *file           // writes keys of signatures
}

// key is ft written as text, to tell signatures apart.
func (g *gen) key(ft funcT) string {
	if g.keys == nil {
		g.keys = &file{g: g, test: true, imports: map[*pkg]string{}, used: map[string]bool{}}
	}
	return g.keys.ts(ft)
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) intn(n int) int        { return g.r.IntN(n) }
func pick[T any](g *gen, xs []T) T   { return xs[g.r.IntN(len(xs))] }

// iface is an interface declaration: an embedding target or an annotated
// interface.
type iface struct {
	pkg     *pkg
	name    string
	tparams []*tparam
	embeds  []typ
	methods []*method
	// Annotated interfaces.
	lines []*line
	form  form
	// target is what an alias or a defined type stands for.
	target namedT
	file   int // 0: a.go, 1: b.go (with a build line), 2: c_test.go
	self   *named
	chain  bool // the first line has the chain flag
}

// chains reports whether in has a fallback chain.
func (g *gen) chains(in *iface) bool {
	return g.opts.Chains == ChainsEvery || in.chain
}

type form int

const (
	formPlain   form = iota
	formGroup        // in a type ( ... ) group
	formAlias        // type X = L[int]
	formDefined      // type X L
)

type method struct {
	name           string
	ft             funcT
	pnames, rnames []string // nil: unnamed
	line           *line
	doc            bool
}

// line is a //breaker: line.
type line struct{ opts []opt }

type opt struct {
	key, val string
	refs     []ref // exclude
}

// ref names an error value for exclude.
type ref struct {
	p    *pkg
	name string
}

// methodSet is the method set of in instantiated with args, sorted by name.
func (in *iface) methodSet(args []typ) []*method {
	m := bind(in.tparams, args)
	var out []*method
	seen := map[string]bool{}
	add := func(x *method) {
		if !seen[x.name] {
			seen[x.name] = true
			out = append(out, x)
		}
	}
	if in.form == formAlias || in.form == formDefined {
		for _, x := range in.target.d.iface.methodSet(in.target.args) {
			add(x)
		}
	}
	for _, x := range in.methods {
		y := *x
		y.ft = subst(x.ft, m).(funcT)
		add(&y)
	}
	for _, e := range in.embeds {
		n := unalias(subst(e, m)).(namedT)
		for _, x := range n.d.iface.methodSet(n.args) {
			add(x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// scope is what a type expression may refer to.
type scope struct {
	p       *pkg // the package declaring it
	tparams []*tparam
	self    *iface // the annotated interface being declared, or nil
}

var (
	methodWords = []string{"Get", "List", "Put", "Quote", "Search", "Fetch", "Load", "Keep", "Sync", "Send", "Watch", "Query", "Ping", "Count", "Find", "Stream", "Apply", "Render", "Resolve", "Notify", "Do", "Run", "Kline", "Push", "Drop"}
	ifaceWords  = []string{"Source", "Store", "Client", "Feed", "Cache", "Repo", "Gateway", "Service", "Backend", "Quotes"}
	plainNames  = []string{"a", "b", "code", "id", "q", "key", "v", "xs", "opts", "n", "s", "name", "data", "fn", "ch", "at", "p", "req", "resp", "vals"}
	// Names of the wrapper's own locals and fields, of packages, of
	// generated identifiers: each must get a fresh name where the body
	// would break.
	collidingNames = []string{"ctx", "err", "next", "w", "call", "ok", "cancel", "runtime", "errors", "time", "http", "context", "fmt", "io", "url", "template", "rand", "reg", "run", "retry", "r0", "r1", "c", "i", "fb", "zero", "args", "res", "tries", "result", "primary", "fallbacks", "breakergenruntime", "contextpkg", "rt", "d", "t", "impl", "route", "tok", "done", "panicking", "rec"}
	predeclared    = []string{"string", "error", "any", "len", "nil", "true", "new", "make", "append", "int", "bool", "cap", "copy", "iota", "max", "clear", "panic", "recover", "close"}
	tparamNames    = []string{"K", "V", "T", "S", "U", "E", "In", "Out", "Key", "Val", "ctx", "err", "w", "next", "c", "zero", "runtime", "errors", "call", "ok", "r0"}
)

// constraints are the type parameters' constraints, with a type argument
// for the test.
var constraints = []*constraint{
	{src: func(*file, []*tparam) string { return "any" }, conc: func(g *gen, _ []*tparam) typ {
		return pick(g, []typ{basicT{"int"}, basicT{"string"}, sliceT{basicT{"byte"}}, ptrT{namedT{d: g.localT0()}}, mapT{basicT{"string"}, basicT{"int"}}})
	}},
	{src: func(*file, []*tparam) string { return "comparable" }, keyable: true, conc: func(g *gen, _ []*tparam) typ {
		return pick(g, []typ{basicT{"int"}, basicT{"string"}})
	}},
	{src: func(f *file, _ []*tparam) string { return f.qual(pCmp) + "Ordered" }, keyable: true, conc: func(g *gen, _ []*tparam) typ {
		return pick(g, []typ{basicT{"float64"}, basicT{"string"}})
	}},
	{src: func(f *file, _ []*tparam) string { return f.qual(pFmt) + "Stringer" }, conc: func(*gen, []*tparam) typ { return namedT{d: stdDuration} }},
	{src: func(*file, []*tparam) string { return "~int | ~int64" }, keyable: true, conc: func(*gen, []*tparam) typ { return basicT{"int64"} }},
	{src: func(f *file, _ []*tparam) string { return "interface{ comparable; " + f.qual(pFmt) + "Stringer }" }, keyable: true, conc: func(*gen, []*tparam) typ { return namedT{d: stdDuration} }},
	{src: func(f *file, _ []*tparam) string { return f.qual(pIO) + "Reader" }, conc: func(*gen, []*tparam) typ { return ptrT{namedT{d: stdStrReader}} }, reader: true},
	// ~[]E of the previous type parameter.
	{src: func(_ *file, prev []*tparam) string { return "~[]" + prev[len(prev)-1].name }, conc: func(_ *gen, prev []*tparam) typ { return sliceT{prev[len(prev)-1].conc} }},
}

// localConstraint is a constraint interface of the local package.
var localConstraint = &constraint{keyable: true,
	src: func(f *file, _ []*tparam) string {
		return f.qual(f.g.local) + f.g.localNumber().name
	},
	conc: func(*gen, []*tparam) typ { return basicT{"float64"} }}

// depConstraint is a constraint interface of the other package.
var depConstraint = &constraint{keyable: true,
	src: func(f *file, _ []*tparam) string {
		return f.qual(f.g.dep) + f.g.depKey().name
	},
	conc: func(*gen, []*tparam) typ { return basicT{"string"} }}

func (g *gen) newTParams(n int, sc *scope) []*tparam {
	var out []*tparam
	used := map[string]bool{}
	for range n {
		name := pick(g, tparamNames)
		for used[name] {
			name = pick(g, tparamNames)
		}
		used[name] = true
		var c *constraint
		switch {
		case sc.p == g.local && g.chance(0.1):
			c = localConstraint
			g.localNumber()
		case g.chance(0.08):
			c = depConstraint
			g.depKey()
		default:
			c = pick(g, constraints)
			if c == constraints[len(constraints)-1] && len(out) == 0 {
				c = constraints[0]
			}
		}
		p := &tparam{name: name, cons: c}
		p.conc = c.conc(g, out)
		out = append(out, p)
	}
	return out
}

func (g *gen) build(modPath string) {
	for _, n := range []string{"runtime", "context", "time", "errors", "http"} {
		if g.chance(0.1) {
			g.reserved[n] = true
		}
	}
	g.drawJudgeNames()
	loc := pick(g, []struct{ dir, name string }{
		{"dep", "dep"}, {"go-store", "store"}, {"store/v2", "store"}, {"rand", "rand"},
		{"template", "template"}, {"http", "http"}, {"context", "context"}, {"runtime", "runtime"},
	})
	g.dep = &pkg{modPath + "/" + g.dir + "/" + loc.dir, loc.name}
	g.depDir = g.dir + "/" + loc.dir
	g.local.name = pick(g, []string{g.dir, g.dir, "x", "source", "runtime", "breaker", "context"})
	if g.reserved["time"] {
		g.timeT = &named{pkg: g.local, name: "time", under: structT{[]field{{name: "n", t: basicT{"int"}}}}}
		g.timeT.declare = func(*file) string { return "type time struct{ n int }" }
		g.localTypes = append(g.localTypes, g.timeT)
	}

	for range g.intn(3) {
		g.depIfaces = append(g.depIfaces, g.newIface(g.dep, pick(g, []string{"Base", "Store", "Closer", "Lister"})+strconv.Itoa(len(g.depIfaces)), false))
	}
	for range g.intn(3) {
		g.localIfaces = append(g.localIfaces, g.newIface(g.local, pick(g, []string{"Pinger", "Getter", "Namer", "Base"})+strconv.Itoa(len(g.localIfaces)), false))
	}
	if g.chance(0.4) {
		g.files = 1 + g.intn(2)
	}
	tag := strconv.FormatUint(g.seed, 36)
	n := 2 + g.intn(4)
	for i := range n {
		name := fmt.Sprintf("%sZ%sN%d", pick(g, ifaceWords), tag, i)
		var in *iface
		targets := append(slices.Clone(g.localIfaces), g.depIfaces...)
		switch {
		case len(targets) > 0 && g.chance(0.15):
			in = &iface{pkg: g.local, name: name, form: formAlias}
			in.target = g.instantiate(pick(g, targets), &scope{p: g.local})
		case len(targets) > 0 && g.chance(0.1):
			in = &iface{pkg: g.local, name: name, form: formDefined}
			t := pick(g, targets)
			in.target = g.instantiate(t, &scope{p: g.local})
		default:
			in = g.newIface(g.local, name, true)
			if g.chance(0.2) {
				in.form = formGroup
			}
		}
		if in.self == nil {
			in.self = &named{pkg: g.local, name: name, iface: in}
		}
		if g.files > 0 {
			in.file = g.intn(g.files + 1)
		}
		g.annotate(in)
		g.annotated = append(g.annotated, in)
	}
	g.drawKeysAndHedges()
}

// instantiate refers to an embedding target, with type arguments when it
// is generic: type parameters of sc, or plain types.
func (g *gen) instantiate(in *iface, sc *scope) namedT {
	d := in.self
	var args []typ
	for range in.tparams {
		if len(sc.tparams) > 0 && g.chance(0.6) {
			args = append(args, tparamT{pick(g, sc.tparams)})
		} else {
			args = append(args, pick(g, []typ{basicT{"int"}, basicT{"string"}, namedT{d: stdDuration}}))
		}
	}
	return namedT{d, args}
}

func (g *gen) newIface(p *pkg, name string, annotated bool) *iface {
	in := &iface{pkg: p, name: name}
	in.self = &named{pkg: p, name: name, iface: in}
	if annotated {
		// The interface itself as a parameter or result type: the
		// test's value is a recorder of its own.
		in.self.val = func(*vctx, []typ) string { return "&fzRec" + name + "{}" }
	}
	sc := &scope{p: p, self: in}
	if !annotated {
		if g.chance(0.3) {
			in.tparams = []*tparam{{name: pick(g, []string{"T", "E", "X"}), cons: constraints[0]}}
		}
	} else if g.chance(0.3) {
		in.tparams = g.newTParams(1+g.intn(3), sc)
	}
	sc.tparams = in.tparams
	// Embedded interfaces.
	for range g.intn(3) {
		switch k := g.intn(10); {
		case k < 4:
			in.embeds = append(in.embeds, namedT{d: pick(g, stdEmbeds)})
		case k < 5 && p == g.local:
			in.embeds = append(in.embeds, namedT{d: g.localRC()})
		case k < 8 && p == g.local && len(g.localIfaces) > 0:
			e := g.instantiate(pick(g, g.localIfaces), sc)
			if len(e.args) > 0 && g.chance(0.4) {
				// Through a generic alias: type LA[T any] = L[T].
				e.d = g.genericAlias(e.d)
			}
			in.embeds = append(in.embeds, e)
		case len(g.depIfaces) > 0:
			in.embeds = append(in.embeds, g.instantiate(pick(g, g.depIfaces), sc))
		}
	}
	// Keep the embeds whose methods agree with those of the embeds
	// before them: a generic interface embedded twice with other type
	// arguments would declare a method twice.
	sigs := map[string]string{}
	in.embeds = slices.DeleteFunc(in.embeds, func(e typ) bool {
		n := unalias(e).(namedT)
		ms := n.d.iface.methodSet(n.args)
		for _, m := range ms {
			if k, ok := sigs[m.name]; ok && k != g.key(m.ft) {
				return true
			}
		}
		for _, m := range ms {
			sigs[m.name] = g.key(m.ft)
		}
		return false
	})
	seen := map[string]bool{}
	for _, m := range in.methodSet(nil) {
		seen[m.name] = true
	}
	n := 1 + g.intn(5)
	if annotated && g.chance(0.03) {
		n = 0
	}
	for range n {
		g.methodCount++
		name := pick(g, methodWords) + strconv.Itoa(g.methodCount)
		if seen[name] {
			continue
		}
		in.methods = append(in.methods, g.newMethod(sc, name, in))
	}
	return in
}

func (g *gen) newMethod(sc *scope, name string, in *iface) *method {
	m := &method{name: name, doc: g.chance(0.3)}
	var params []typ
	if g.chance(0.55) {
		if sc.p == g.local && g.chance(0.15) {
			params = append(params, namedT{d: g.localCtx()})
		} else {
			params = append(params, namedT{d: stdContext})
		}
	}
	for range g.intn(4) {
		params = append(params, g.selfOr(sc))
	}
	if g.chance(0.12) {
		// Two packages with one name in one signature.
		params = append(params, pick(g, [][]typ{
			{ptrT{namedT{d: stdTText}}, ptrT{namedT{d: stdTHTML}}},
			{ptrT{namedT{d: stdRand}}, ptrT{namedT{d: stdRandV2}}},
		})...)
	}
	variadic := g.chance(0.25)
	if variadic {
		params = append(params, sliceT{g.variadicElem(sc)})
	}
	var results []typ
	nr := pick(g, []int{0, 1, 1, 1, 2, 2, 2, 3, 3})
	errLast := g.chance(0.75)
	for i := range nr {
		if i == nr-1 && errLast {
			results = append(results, namedT{d: stdError})
		} else {
			results = append(results, g.selfOr(sc))
		}
	}
	m.ft = funcT{params, results, variadic}
	used := map[string]bool{}
	fresh := func(pool func() string) string {
		for {
			s := pool()
			if s == "_" || !used[s] {
				used[s] = true
				return s
			}
		}
	}
	namePool := func() string {
		switch k := g.intn(100); {
		case k < 45:
			return pick(g, plainNames) + strconv.Itoa(g.intn(3))
		case k < 80:
			return pick(g, collidingNames)
		case k < 86:
			return pick(g, predeclared)
		case k < 93:
			return "_"
		default:
			var own []string
			for _, t := range g.localTypes {
				own = append(own, t.name)
			}
			for _, p := range sc.tparams {
				own = append(own, p.name)
			}
			own = append(own, in.name, name, g.dep.name)
			return own[g.intn(len(own))]
		}
	}
	if len(params) > 0 && !g.chance(0.2) {
		for range params {
			m.pnames = append(m.pnames, g.paramName(fresh(namePool), used))
		}
	}
	if len(results) > 0 && g.chance(0.35) {
		for i := range results {
			if i == len(results)-1 && errLast && g.chance(0.5) && !used["err"] {
				used["err"] = true
				m.rnames = append(m.rnames, "err")
				continue
			}
			m.rnames = append(m.rnames, fresh(namePool))
		}
	}
	g.withCarrier(m, sc)
	if rs := m.ft.results; len(rs) == 0 || g.carrierOf(rs[len(rs)-1]) == nil {
		g.withResponse(m)
	}
	return m
}

// selfOr is, now and then, the annotated interface being declared (as in
// Sub(ctx) (Source, error)), else a random type.
func (g *gen) selfOr(sc *scope) typ {
	if sc.self != nil && sc.self.self.val != nil && g.chance(0.06) {
		var args []typ
		for _, p := range sc.tparams {
			args = append(args, tparamT{p})
		}
		return namedT{sc.self.self, args}
	}
	return g.randType(sc, 0, true)
}

// variadicElem is the element type of a variadic parameter.
func (g *gen) variadicElem(sc *scope) typ {
	switch k := g.intn(10); {
	case k < 3:
		return namedT{d: stdAny}
	case k < 5:
		return g.randType(sc, 1, false)
	case k < 6 && sc.p == g.local:
		return namedT{d: g.localOpt()}
	case k < 7:
		return funcT{params: []typ{basicT{"string"}}, results: []typ{namedT{d: stdError}}}
	default:
		return basicT{pick(g, basics)}
	}
}

// randType is a random type in sc. Only a top-level type may be a func:
// the test compares everything else with reflect.
func (g *gen) randType(sc *scope, depth int, top bool) typ {
	for {
		k := g.intn(100)
		if depth > 2 {
			k = g.intn(30)
		}
		switch {
		case k < 18:
			return basicT{pick(g, basics)}
		case k < 30:
			return pick(g, stdValueTypes)
		case k < 42 && len(sc.tparams) > 0:
			return tparamT{pick(g, sc.tparams)}
		case k < 49 && sc.p == g.local:
			return pick(g, []typ{namedT{d: g.localT0()}, ptrT{namedT{d: g.localT0()}}, namedT{d: g.localID()}, namedT{d: g.localCode()}, namedT{d: g.localInts()}, namedT{d: g.timeOr()}})
		case k < 52 && sc.p == g.local:
			return namedT{g.localPair(), []typ{g.randType(sc, depth+1, false)}}
		case k < 56:
			return pick(g, []typ{namedT{d: g.depItem()}, ptrT{namedT{d: g.depItem()}}, namedT{d: g.depLevel()}, namedT{d: g.depHandle()}})
		case k < 58:
			return namedT{g.depBox(), []typ{g.randType(sc, depth+1, false)}}
		case k < 68:
			return sliceT{g.randType(sc, depth+1, false)}
		case k < 65:
			return arrayT{1 + g.intn(3), g.randType(sc, depth+1, false)}
		case k < 73:
			return mapT{g.keyType(sc), g.randType(sc, depth+1, false)}
		case k < 80:
			return g.chanType(sc, depth)
		case k < 87 && top:
			return g.funcType(sc)
		case k < 89 && top && sc.p == g.local:
			return namedT{d: g.localOpt()}
		case k < 92:
			var fs []field
			if g.chance(0.5) {
				fs = append(fs, field{t: namedT{d: stdReader}, embedded: true, name: "Reader"})
			}
			fs = append(fs, field{name: "Name", t: basicT{"string"}, tag: `json:"name,omitempty"`})
			// Only the local package may add an unexported field: another
			// package's would make the interface unwrappable (an error).
			if g.chance(0.5) && sc.p == g.local {
				fs = append(fs, field{name: "raw", t: sliceT{basicT{"byte"}}})
			}
			return structT{fs}
		case k < 95:
			return litT{g.chance(0.5)}
		case k < 98:
			return ptrT{g.randType(sc, depth+1, false)}
		}
	}
}

func (g *gen) keyType(sc *scope) typ {
	if sc.p == g.local && g.chance(0.2) {
		return namedT{d: g.localCode()}
	}
	return basicT{pick(g, []string{"string", "int", "int64", "rune"})}
}

func (g *gen) chanType(sc *scope, depth int) typ {
	elem := g.randType(sc, depth+2, false)
	if g.chance(0.3) {
		// chan (<-chan T) needs its parentheses.
		return chanT{pick(g, []chanDir{both, both, sendOnly, recvOnly}), chanT{recvOnly, elem}}
	}
	return chanT{pick(g, []chanDir{both, sendOnly, recvOnly}), elem}
}

func (g *gen) funcType(sc *scope) funcT {
	var ft funcT
	for range g.intn(3) {
		ft.params = append(ft.params, g.randType(sc, 2, false))
	}
	if g.chance(0.35) {
		ft.params = append(ft.params, sliceT{pick(g, []typ{namedT{d: stdAny}, basicT{"string"}, basicT{"int"}})})
		ft.variadic = true
	}
	for range g.intn(3) {
		ft.results = append(ft.results, g.randType(sc, 2, false))
	}
	if g.chance(0.5) {
		ft.results = append(ft.results, namedT{d: stdError})
	}
	return ft
}

// Lazily declared types of the local package.

func (g *gen) localT0() *named {
	if g.t0 == nil {
		g.t0 = &named{pkg: g.local, name: "T0", under: structT{[]field{{name: "N", t: basicT{"int"}}, {name: "S", t: basicT{"string"}}}}}
		g.t0.declare = func(*file) string { return "// T0 is a plain struct.\ntype T0 struct {\n\tN int\n\tS string\n}" }
		g.localTypes = append(g.localTypes, g.t0)
	}
	return g.t0
}

func (g *gen) localPair() *named {
	if g.pair == nil {
		p := &tparam{name: "T", cons: constraints[0]}
		g.pair = &named{pkg: g.local, name: "Pair", tparams: []*tparam{p}, under: structT{[]field{{name: "A", t: tparamT{p}}, {name: "B", t: tparamT{p}}}}}
		g.pair.declare = func(*file) string { return "// Pair is a generic struct.\ntype Pair[T any] struct{ A, B T }" }
		g.localTypes = append(g.localTypes, g.pair)
	}
	return g.pair
}

func (g *gen) localOpt() *named {
	if g.opt == nil {
		ft := funcT{params: []typ{basicT{"string"}, sliceT{basicT{"int"}}}, results: []typ{namedT{d: stdError}}, variadic: true}
		g.opt = &named{pkg: g.local, name: "Opt", under: ft}
		g.opt.declare = func(*file) string {
			return "// Opt is a func type with a variadic parameter.\ntype Opt func(string, ...int) error"
		}
		g.localTypes = append(g.localTypes, g.opt)
	}
	return g.opt
}

func (g *gen) localID() *named {
	if g.id == nil {
		g.id = &named{pkg: g.local, name: "ID", alias: true, under: basicT{"string"}}
		g.id.declare = func(*file) string { return "// ID is a local alias.\ntype ID = string" }
		g.localTypes = append(g.localTypes, g.id)
	}
	return g.id
}

func (g *gen) localCtx() *named {
	if g.ctxAlias == nil {
		g.ctxAlias = &named{pkg: g.local, name: "Ctx", alias: true, under: namedT{d: stdContext}}
		g.ctxAlias.declare = func(f *file) string {
			return "// Ctx is an alias of context.Context.\ntype Ctx = " + f.qual(pContext) + "Context"
		}
		g.localTypes = append(g.localTypes, g.ctxAlias)
	}
	return g.ctxAlias
}

func (g *gen) localRC() *named {
	if g.rcAlias == nil {
		g.rcAlias = &named{pkg: g.local, name: "RC", alias: true, under: namedT{d: stdReadCloser}, iface: stdReadCloser.iface}
		g.rcAlias.declare = func(f *file) string {
			return "// RC is an alias of an interface.\ntype RC = " + f.qual(pIO) + "ReadCloser"
		}
		g.localTypes = append(g.localTypes, g.rcAlias)
	}
	return g.rcAlias
}

func (g *gen) localCode() *named {
	if g.code == nil {
		g.code = &named{pkg: g.local, name: "Code", under: basicT{"int"}}
		g.code.declare = func(*file) string { return "// Code is a defined integer type.\ntype Code int" }
		g.localTypes = append(g.localTypes, g.code)
	}
	return g.code
}

func (g *gen) localInts() *named {
	if g.ints == nil {
		g.ints = &named{pkg: g.local, name: "Ints", under: sliceT{basicT{"int"}}}
		g.ints.declare = func(*file) string { return "// Ints is a defined slice type.\ntype Ints []int" }
		g.localTypes = append(g.localTypes, g.ints)
	}
	return g.ints
}

func (g *gen) localNumber() *named {
	if g.number == nil {
		g.number = &named{pkg: g.local, name: "Number"}
		g.number.declare = func(*file) string { return "// Number is a constraint.\ntype Number interface{ ~int | ~float64 }" }
		g.localTypes = append(g.localTypes, g.number)
	}
	return g.number
}

// timeOr is the local type named time when the package declares one.
func (g *gen) timeOr() *named {
	if g.timeT != nil {
		return g.timeT
	}
	return g.localCode()
}

// genericAlias is a generic alias of the generic interface d.
func (g *gen) genericAlias(d *named) *named {
	name := d.name + "A"
	for _, t := range g.localTypes {
		if t.name == name {
			return t
		}
	}
	p := &tparam{name: "T", cons: constraints[0]}
	a := &named{pkg: g.local, name: name, alias: true, tparams: []*tparam{p}, under: namedT{d, []typ{tparamT{p}}}, iface: d.iface}
	a.declare = func(*file) string {
		return "// " + name + " is a generic alias of an interface.\ntype " + name + "[T any] = " + d.name + "[T]"
	}
	g.localTypes = append(g.localTypes, a)
	return a
}

// Lazily declared types of the other package.

func (g *gen) depItem() *named {
	if g.item == nil {
		g.item = &named{pkg: g.dep, name: "Item", under: structT{[]field{{name: "ID", t: basicT{"int"}}, {name: "Name", t: basicT{"string"}}}}}
		g.item.declare = func(*file) string { return "// Item is a struct.\ntype Item struct {\n\tID   int\n\tName string\n}" }
		g.depTypes = append(g.depTypes, g.item)
	}
	return g.item
}

func (g *gen) depBox() *named {
	if g.box == nil {
		p := &tparam{name: "T", cons: constraints[0]}
		g.box = &named{pkg: g.dep, name: "Box", tparams: []*tparam{p}, under: structT{[]field{{name: "V", t: tparamT{p}}}}}
		g.box.declare = func(*file) string { return "// Box is a generic struct.\ntype Box[T any] struct{ V T }" }
		g.depTypes = append(g.depTypes, g.box)
	}
	return g.box
}

func (g *gen) depLevel() *named {
	if g.level == nil {
		g.level = &named{pkg: g.dep, name: "Level", under: basicT{"int"}}
		g.level.declare = func(*file) string { return "// Level is a defined integer type.\ntype Level int" }
		g.depTypes = append(g.depTypes, g.level)
	}
	return g.level
}

// depHandle is an alias of a type in an internal package.
func (g *gen) depHandle() *named {
	if g.handle == nil {
		impl := &pkg{g.dep.path + "/internal/impl", "impl"}
		h := &named{pkg: impl, name: "Handle", under: structT{[]field{{name: "N", t: basicT{"int"}}}}}
		g.handle = &named{pkg: g.dep, name: "Handle", alias: true, under: namedT{d: h}}
		g.handle.declare = func(f *file) string {
			return "// Handle is an alias of a type in an internal package.\ntype Handle = " + f.qual(impl) + "Handle"
		}
		g.depTypes = append(g.depTypes, g.handle)
	}
	return g.handle
}

func (g *gen) depKey() *named {
	if g.depKeyT == nil {
		g.depKeyT = &named{pkg: g.dep, name: "Key"}
		g.depKeyT.declare = func(*file) string { return "// Key is a constraint.\ntype Key interface{ ~string | ~int }" }
		g.depTypes = append(g.depTypes, g.depKeyT)
	}
	return g.depKeyT
}

// Annotations.

func (g *gen) breakerName() string {
	sep := pick(g, []string{"-", ".", "_", ":"})
	n := fmt.Sprintf("s%d%sn%d", g.seed, sep, len(g.names))
	g.names = append(g.names, n)
	return n
}

// nameOpts gives the settings of a name the first time it is used.
func (g *gen) nameOpts(name string) []opt {
	if g.settings[name] {
		return nil
	}
	g.settings[name] = true
	var o []opt
	if g.chance(0.4) {
		o = append(o, opt{key: "threshold", val: strconv.Itoa(1 + g.intn(9))})
	}
	if g.chance(0.3) {
		o = append(o, opt{key: "reset", val: pick(g, []string{"30s", "1m", "500ms", "2m30s"})})
	}
	if g.chance(0.15) {
		o = append(o, opt{key: "halfopen", val: strconv.Itoa(1 + g.intn(3))})
	}
	if g.chance(0.15) {
		o = append(o, opt{key: "successes", val: strconv.Itoa(1 + g.intn(3))})
	}
	if g.chance(0.25) {
		o = append(o, opt{key: "ratelimit", val: pick(g, []string{"1000/100", "1.5/3", "50/1", "0.5/2"})})
		g.limited[name] = true
	}
	return append(o, g.windowOpts()...)
}

// windowOpts are window and load keys that never refuse or trip a call of
// the fuzz test (its calls are few and sequential): they exercise the
// rendering of every kind of Config field, not the runtime.
func (g *gen) windowOpts() []opt {
	var o []opt
	if g.rLoad.Float64() < 0.2 {
		o = append(o, opt{key: "window", val: []string{"1000", "1h", "90s"}[g.rLoad.IntN(3)]},
			opt{key: "minimum", val: "1000"})
		if g.rLoad.Float64() < 0.5 {
			o = append(o, opt{key: "failrate", val: "100%"}, opt{key: "slow", val: "1h"}, opt{key: "slowrate", val: "100%"})
		}
	}
	if g.rLoad.Float64() < 0.15 {
		o = append(o, opt{key: "inflight", val: "1h"})
	}
	if g.rLoad.Float64() < 0.15 {
		o = append(o, opt{key: "concurrency", val: "1000"})
	}
	return o
}

// lineOpts are the keys that belong to a line.
func (g *gen) lineOpts(name string, ctx bool) []opt {
	var o []opt
	if g.limited[name] && g.chance(0.4) {
		o = append(o, opt{key: "maxwait", val: pick(g, []string{"1s", "250ms"})})
	}
	if ctx && g.chance(0.3) {
		o = append(o, opt{key: "timeout", val: pick(g, []string{"1s", "2m", "1500ms"})})
	}
	if g.chance(0.25) {
		o = append(o, opt{key: "exclude", refs: g.excludeRefs()})
	}
	return o
}

func (g *gen) excludeRefs() []ref {
	var refs []ref
	for range 1 + g.intn(2) {
		var r ref
		switch g.intn(6) {
		case 0:
			if len(g.localErrs) == 0 || g.chance(0.3) {
				g.localErrs = append(g.localErrs, "Err"+string(rune('A'+len(g.localErrs))))
			}
			r = ref{g.local, pick(g, g.localErrs)}
		case 1:
			if len(g.depErrs) == 0 {
				g.depErrs = append(g.depErrs, "ErrGone")
			}
			r = ref{g.dep, "ErrGone"}
		case 2:
			r = ref{pIO, "EOF"}
		case 3:
			r = ref{pContext, "Canceled"}
		case 4:
			r = ref{pOS, "ErrNotExist"}
		default:
			r = ref{pFS, "ErrClosed"}
		}
		if !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	return refs
}

// pickName is a breaker name for a line: a new one, one given before
// (bare), or "" for the interface's default name.
func (g *gen) pickName() string {
	switch k := g.intn(10); {
	case k < 6 || len(g.names) == 0 && k < 8:
		return g.breakerName()
	case k < 8:
		return pick(g, g.names)
	}
	return ""
}

func (g *gen) annotate(in *iface) {
	var targs []typ
	for _, p := range in.tparams {
		targs = append(targs, tparamT{p})
	}
	ms := in.methodSet(targs)
	anyCtx := slices.ContainsFunc(ms, func(m *method) bool { return len(m.ft.params) > 0 && isContext(m.ft.params[0]) })
	ifaceLine := func(withMethods bool) *line {
		l := &line{}
		name := g.pickName()
		if name != "" {
			l.opts = append(l.opts, opt{key: "name", val: name})
		} else {
			name = strings.ToLower(in.name)
		}
		if withMethods {
			var globs []string
			for range 1 + g.intn(2) {
				m := pick(g, ms).name
				switch g.intn(4) {
				case 0:
					globs = append(globs, m)
				case 1:
					globs = append(globs, strings.TrimRight(m, "0123456789")+"*")
				case 2:
					globs = append(globs, m[:1]+"*")
				default:
					globs = append(globs, "*"+m[len(m)-1:])
				}
			}
			slices.Sort(globs)
			l.opts = append(l.opts, opt{key: "methods", val: strings.Join(slices.Compact(globs), ",")})
		}
		l.opts = append(l.opts, g.nameOpts(name)...)
		l.opts = append(l.opts, g.lineOpts(name, anyCtx)...)
		if len(l.opts) == 0 {
			// gofmt rewrites a bare //breaker: in a doc comment to
			// "// breaker:", which is no annotation.
			l.opts = append(l.opts, opt{key: "name", val: name})
		}
		g.r.Shuffle(len(l.opts), func(i, j int) { l.opts[i], l.opts[j] = l.opts[j], l.opts[i] })
		return l
	}
	if len(ms) > 0 {
		for range g.intn(3) {
			in.lines = append(in.lines, ifaceLine(true))
		}
	}
	if g.chance(0.7) {
		in.lines = slices.Insert(in.lines, g.intn(len(in.lines)+1), ifaceLine(false))
	}
	marked := false
	for _, m := range in.methods {
		guarded := g.guardable(m)
		if !g.chance(0.35) {
			continue
		}
		marked = true
		ctx := len(m.ft.params) > 0 && isContext(m.ft.params[0])
		if !guarded || g.chance(0.3) {
			m.line = &line{opts: []opt{{key: "skip"}}}
			continue
		}
		l := &line{}
		if g.chance(0.4) {
			name := g.pickName()
			if name == "" {
				name = g.breakerName()
			}
			l.opts = append(l.opts, opt{key: "name", val: name})
			l.opts = append(l.opts, g.nameOpts(name)...)
		}
		if ctx && g.chance(0.5) {
			l.opts = append(l.opts, opt{key: "timeout", val: pick(g, []string{"1s", "3s", "100ms"})})
		}
		if g.chance(0.3) {
			l.opts = append(l.opts, opt{key: "exclude", refs: g.excludeRefs()})
		}
		if len(l.opts) == 0 {
			l.opts = []opt{{key: "skip"}}
		}
		m.line = l
	}
	if len(in.lines) == 0 && !marked {
		in.lines = append(in.lines, ifaceLine(false))
	}
	if g.opts.Chains == ChainsFlag && g.chance(0.4) {
		if len(in.lines) == 0 {
			in.lines = append(in.lines, ifaceLine(false))
		}
		in.chain = true
		l := in.lines[0]
		l.opts = slices.Insert(l.opts, g.intn(len(l.opts)+1), opt{key: "chain"})
	}
	g.judge(in, ms)
}

// gofmt formats src, which must be valid Go.
func gofmt(name string, src string) ([]byte, error) {
	b, err := format.Source([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("ifacegen: %s does not parse: %v\n%s", name, err, numbered(src))
	}
	return b, nil
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}
