package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/ifacegen"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/model"
)

func TestImportNames(t *testing.T) {
	im := newImports(map[string]bool{"context": true})
	assert.Equal(t, "template", im.add("html/template", "template"))
	assert.Equal(t, "texttemplate", im.add("text/template", "template"))
	assert.Equal(t, "rand", im.add("math/rand", "rand"))
	assert.Equal(t, "randv2", im.add("math/rand/v2", "rand"))
	assert.Equal(t, "yaml", im.add("gopkg.in/yaml.v3", "yaml"))
	assert.Equal(t, "contextpkg", im.add("context", "context"))
	assert.Equal(t, "runtime", im.add("runtime", "runtime"))
	assert.Equal(t, "breakergenruntime", im.add(RuntimePath, "runtime"))
	assert.Equal(t, "template", im.add("html/template", "template"), "stable")
	// Names that cannot be imports.
	im2 := newImports(nil)
	assert.Equal(t, "stringpkg", im2.add("example.com/string", "string"))
}

func TestDuration(t *testing.T) {
	g := &gen{}
	for d, want := range map[time.Duration]string{
		time.Hour:               "time.Hour",
		90 * time.Minute:        "90 * time.Minute",
		30 * time.Second:        "30 * time.Second",
		1500 * time.Millisecond: "1500 * time.Millisecond",
		time.Microsecond:        "time.Microsecond",
		7:                       "7 * time.Nanosecond",
	} {
		assert.Equal(t, want, jen.Add(g.duration(d)).GoString(), d.String())
	}
}

func TestArticle(t *testing.T) {
	for name, want := range map[string]string{
		"F": "an", "H": "an", "R": "an", "X": "an", "A": "an", "Q": "a", "B": "a", "U": "a",
		"HTTPSource": "an", "S3Store": "an", "RPC": "an", "URLSource": "a", "KVStore": "a",
		"Item": "an", "Order": "an", "Quote": "a", "Finance": "a", "Source": "a",
		"apiSource": "an", "quotes": "a", "ýx": "a", "行情": "a",
		"UserStore": "a", "Upstream": "an", "UnitSource": "a", "Update": "an", "UtilityAPI": "a",
		"EuroRates": "a", "OneShot": "a", "UnimplementedStore": "an", "UniformSource": "a", "UnicodeNames": "a", "Order2": "an", "USStocks": "a",
	} {
		assert.Equal(t, want, articleFor(name), name)
	}
}

func TestWrap(t *testing.T) {
	lines := wrap("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen")
	for _, l := range lines {
		assert.LessOrEqual(t, len(l), 76)
	}
	assert.Len(t, lines, 2)
}

func TestGroupImports(t *testing.T) {
	src := "package x\n\nimport (\n\t\"context\"\n\t\"example.com/y\"\n\t\"time\"\n)\n"
	assert.Equal(t, "package x\n\nimport (\n\t\"context\"\n\t\"time\"\n\n\t\"example.com/y\"\n)\n", string(groupImports([]byte(src))))
	only := "package x\n\nimport (\n\t\"context\"\n\t\"time\"\n)\n"
	assert.Equal(t, only, string(groupImports([]byte(only))))
}

// TestPartsJoinAsWhole: a file rendered in parts, each formatted alone, is
// byte for byte the file rendered whole, whichever part needs which import
// (net/http only in the first interfaces, net/url only in the last,
// generics, chains and a blank-identifier-free last part).
func TestPartsJoinAsWhole(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("package p\n\nimport (\n\t\"context\"\n\t\"net/http\"\n\t\"net/url\"\n)\n")
	for i := range 40 {
		switch {
		case i < 3:
			fmt.Fprintf(&b, "\n//breaker:name=h%d\ntype H%d interface {\n\tDo(ctx context.Context, r *http.Request) (*http.Response, error)\n}\n", i, i)
		case i >= 37:
			fmt.Fprintf(&b, "\n//breaker:name=u%d timeout=2s\ntype U%d interface {\n\tGet(u *url.URL) error\n}\n", i, i)
		case i%3 == 0:
			fmt.Fprintf(&b, "\n//breaker:name=g%d\ntype G%d[K comparable, V any] interface {\n\tGet(ctx context.Context, k K) (V, error)\n}\n", i, i)
		case i%3 == 1:
			fmt.Fprintf(&b, "\n//breaker:name=c%d chain\ntype C%d interface {\n\tGet(ctx context.Context, k string) (int, error)\n}\n", i, i)
		default:
			fmt.Fprintf(&b, "\n// S%d has a doc.\n//\n//breaker:name=s%d threshold=3\ntype S%d interface {\n\tSet(ctx context.Context, k string, v ...int) error\n\tPing()\n}\n", i, i, i)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.25.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(b.String()), 0o644))
	res, err := load.Load(load.Config{Dir: dir, Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")})
	require.NoError(t, err)
	m := model.Build(res, model.Options{})
	require.Empty(t, m.Errors)
	require.Len(t, m.Files, 1)
	require.Len(t, m.Files[0].Interfaces, 40)
	whole, err := file(m.Files[0], 1)
	require.NoError(t, err)
	assert.Contains(t, string(whole), "\"net/url\"")
	for _, parts := range []int{2, 3, 7, 40} {
		got, err := file(m.Files[0], parts)
		require.NoError(t, err)
		assert.Equal(t, string(whole), string(got), "%d parts", parts)
	}
	auto, err := File(m.Files[0])
	require.NoError(t, err)
	assert.Equal(t, string(whole), string(auto))
}

// TestTextBodiesAsTrees: the plain bodies written as text (plaintext.go)
// and the plain interfaces written whole as text (plaindecl.go) are byte
// for byte what jennifer and gofmt make of the trees, for every shape of
// them: ctx first, from context.Background or a request's Context, a
// limiter, a timeout (with a request to put the ctx back in), a variadic,
// names that collide with the body's locals and the constructor's, a ctx
// name so long that the deferred closure cannot keep to one line, an HTTP
// response read after the call (which keeps its tree), unguarded methods
// with and without an error or results, a runtime.Config of one field a
// line, excluded errors of two packages, every type the text writes
// (pointers, slices, arrays, maps, funcs, empty interfaces, aliases,
// instantiated generics, unsafe.Pointer) and some it leaves to the trees
// (channels, structs), and an interface whose wrapper names its field
// next2.
func TestTextBodiesAsTrees(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"unsafe"
)

//breaker:name=a threshold=3
//breaker:name=b methods=Limited* ratelimit=5/10
//breaker:name=c methods=Timed* timeout=2s
type A interface {
	Get(ctx context.Context, k string) (int, error)
	Sync(k string) error
	Req(r *http.Request) error
	Set(ctx context.Context, k string, v ...int) error
	Clash(call, err, ok string, ctx2 context.Context) (int, error)
	Long(aContextWhoseNameIsLongerThanTheDeferredClosureCanCarryOnItsLine context.Context) error
	LimitedGet(ctx context.Context) error
	LimitedSync() error
	TimedGet(ctx context.Context, k string) (string, error)
	TimedReq(r *http.Request) error
	TimedDo(r *http.Request) (*http.Response, error)
}

// B is plain: every part of its wrapper is written as text.
//
//breaker:name=b1 threshold=3 reset=1s..1m jitter=20% halfopen=2 successes=2 window=100 failrate=50% ratelimit=5/10 exclude=ErrGone,io.EOF
//breaker:name=b2 methods=T* timeout=1500ms
//breaker:name=b3 methods=M* window=1m minimum=10
type B interface {
	Get(ctx context.Context, k string) (int, error)
	Types(w *http.Request, reg []string, next [4]byte, call map[string][]*int, ok func(int, ...string) (bool, error), u unsafe.Pointer, e interface{}, a any, p atomic.Pointer[int]) error
	Tick(ctx context.Context, f func() func(x int) string) (n int, err error)
	Many(context.Context, int, string) (map[string]int, []byte, error)
	//breaker:skip
	Skip(ctx context.Context) error
	Name() string
	Pair() (int, string)
	Nothing()
	MGet(ctx context.Context, codes ...string) error
	next() error
}

//breaker:name=c
type C interface {
	Chan(ctx context.Context, ch chan<- int) error
}

//breaker:name=d
type D interface {
	Struct(ctx context.Context, s struct{ A int }) error
}

var ErrGone = errors.New("gone")
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.25.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644))
	res, err := load.Load(load.Config{Dir: dir, Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")})
	require.NoError(t, err)
	m := model.Build(res, model.Options{})
	require.Empty(t, m.Errors)
	require.Len(t, m.Files, 1)
	text, err := File(m.Files[0])
	require.NoError(t, err)
	mf := m.Files[0]
	local := mf.Interfaces[0].Obj.Pkg()
	g := &gen{im: fileImports(mf, local), tr: typer{local: local}, local: local}
	for _, in := range mf.Interfaces {
		written := g.textIface(in) != nil
		assert.Equal(t, in.Name == "B", written, "%s written as text", in.Name)
	}
	textBodies = false
	defer func() { textBodies = true }()
	trees, err := File(m.Files[0])
	require.NoError(t, err)
	assert.Equal(t, string(trees), string(text))
	assert.NotContains(t, string(text), bodyMarker)
	assert.NotContains(t, string(text), declMarker)
	assert.Contains(t, string(text), "aContextWhoseNameIsLongerThanTheDeferredClosureCanCarryOnItsLine,", "the closure on lines of its own")
}

// TestTextAsTreesRandom: the interfaces of the generator fuzzer's random
// packages (ifacegen: every shape of signature, route and annotation it
// knows, with names chosen to collide) render to the same bytes with and
// without the text paths, and some of them do take a text path.
func TestTextAsTreesRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a module of random packages")
	}
	dir := t.TempDir()
	root, err := filepath.Abs("../../../..")
	require.NoError(t, err)
	gomod := "module example.com/x\n\ngo 1.25.0\n\nrequire github.com/breakergen/breakergen v0.0.0\n\nreplace github.com/breakergen/breakergen => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	for seed := range uint64(40) {
		p, err := ifacegen.Generate("example.com/x", seed+1, ifacegen.Options{Chains: ifacegen.ChainsFlag})
		require.NoError(t, err)
		for name, data := range p.Files {
			path := filepath.Join(dir, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, data, 0o644))
		}
	}
	res, err := load.Load(load.Config{Dir: dir, Patterns: []string{"./..."}, Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")})
	require.NoError(t, err)
	m := model.Build(res, model.Options{})
	require.Empty(t, m.Errors)
	require.NotEmpty(t, m.Files)
	texts, total := 0, 0
	for _, mf := range m.Files {
		local := mf.Interfaces[0].Obj.Pkg()
		g := &gen{im: fileImports(mf, local), tr: typer{local: local}, local: local}
		for _, in := range mf.Interfaces {
			total++
			if g.textIface(in) != nil {
				texts++
			}
		}
		text, err := File(mf)
		require.NoError(t, err, mf.Path)
		textBodies = false
		trees, err := File(mf)
		textBodies = true
		require.NoError(t, err, mf.Path)
		assert.Equal(t, string(trees), string(text), mf.Path)
	}
	assert.Positive(t, texts, "none of %d interfaces written as text", total)
	t.Logf("%d of %d interfaces written as text", texts, total)
}
