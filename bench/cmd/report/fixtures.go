package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The generator comparison runs every tool on two packages of a throw-away
// module: synth, 200 annotated interfaces of 10 methods each in 20 files
// (the package cmd/breakergen's BenchmarkGenerate200x10 times), synthone,
// the same interfaces in one file, and httpgen, whose signatures use
// net/http, io, net/url and generics.

const fixtureModule = "example.com/genbench"

// fixture is one package the generators are timed on.
type fixture struct {
	name       string   // package name and directory
	interfaces []string // the interfaces mockgen is asked for
	methods    int      // methods over all interfaces, for lines a method
	files      []file   // the package's files, in order
}

// file is one source file of a fixture.
type file struct {
	name string
	src  string
	// ifaces: the file declares interfaces, so mockgen's source mode
	// (one file a run) runs on it.
	ifaces bool
}

func fixtures() []fixture {
	return []fixture{synthFixture("synth", 200, 10, 10), synthFixture("synthone", 200, 10, 200), httpFixture()}
}

// synthFixture is a copy of writeSynthetic in
// cmd/breakergen/bench_test.go (a test of package main, which this module
// cannot import): package name, nIfaces annotated interfaces with nMethods
// methods each, spread over files of perFile interfaces (writeSynthetic:
// 10), with the usual shapes: ctx first or not, variadics, several
// results, routes by methods globs, method lines, skips. Keep the two in
// step, so that the report and the generator's own benchmark time the same
// package. With perFile = nIfaces every interface is in one file, which
// mockgen's source mode (one file a process) reads in one run.
func synthFixture(name string, nIfaces, nMethods, perFile int) fixture {
	fx := fixture{name: name, methods: nIfaces * nMethods}
	fx.files = append(fx.files, file{name: "common.go", src: "package " + name + `

import "errors"

type Quote struct{ Code string; Price float64 }

var ErrNotFound = errors.New("not found")
`})
	for f := 0; f*perFile < nIfaces; f++ {
		var b strings.Builder
		b.WriteString("package " + name + "\n\nimport (\n\t\"context\"\n\t\"io\"\n\t\"time\"\n)\n\nvar _ = io.EOF\n")
		for i := f * perFile; i < min(nIfaces, (f+1)*perFile); i++ {
			fx.interfaces = append(fx.interfaces, fmt.Sprintf("Source%d", i))
			fmt.Fprintf(&b, "\n// Source%d is a synthetic data source.\n", i)
			fmt.Fprintf(&b, "//breaker:name=s%d threshold=5 reset=30s ratelimit=10/20 exclude=ErrNotFound,io.EOF\n", i)
			fmt.Fprintf(&b, "//breaker:name=s%d-get methods=Get* timeout=2s\n", i)
			fmt.Fprintf(&b, "type Source%d interface {\n", i)
			for m := range nMethods {
				switch m % 5 {
				case 0:
					fmt.Fprintf(&b, "\tGet%d(ctx context.Context, code string) (Quote, error)\n", m)
				case 1:
					fmt.Fprintf(&b, "\t//breaker:timeout=1s\n\tList%d(ctx context.Context, codes ...string) ([]Quote, error)\n", m)
				case 2:
					fmt.Fprintf(&b, "\tAt%d(ctx context.Context, t time.Time, n int) (map[string]Quote, int, error)\n", m)
				case 3:
					fmt.Fprintf(&b, "\tSync%d(code string) error\n", m)
				case 4:
					fmt.Fprintf(&b, "\t//breaker:skip\n\tPing%d(ctx context.Context) error\n", m)
				}
			}
			b.WriteString("}\n")
		}
		fx.files = append(fx.files, file{name: fmt.Sprintf("source%02d.go", f), src: b.String(), ifaces: true})
	}
	return fx
}

func httpFixture() fixture {
	var b strings.Builder
	b.WriteString(`// Package httpgen has interfaces whose signatures use net/http and generics.
package httpgen

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Number is a numeric constraint.
type Number interface{ ~int | ~int64 | ~float64 }
`)
	var names []string
	for i := range 10 {
		s := fmt.Sprintf("%02d", i)
		names = append(names, "Fetcher"+s, "Cache"+s, "Counter"+s, "Gateway"+s)
		fmt.Fprintf(&b, `
// Fetcher%[1]s fetches over HTTP.
//
//breaker:name=fetch%[1]s threshold=3 reset=10s
type Fetcher%[1]s interface {
	Do(ctx context.Context, req *http.Request) (*http.Response, error)
	Get(ctx context.Context, u *url.URL, h http.Header) (*http.Response, error)
	Post(ctx context.Context, u string, body io.Reader) (*http.Response, error)
	Cookies(ctx context.Context, u *url.URL) ([]*http.Cookie, error)
	RoundTrip(req *http.Request) (*http.Response, error)
}

// Cache%[1]s is a generic cache.
//
//breaker:name=cache%[1]s
type Cache%[1]s[K comparable, V any] interface {
	Get(ctx context.Context, key K) (V, error)
	GetMany(ctx context.Context, keys ...K) (map[K]V, error)
	Set(ctx context.Context, key K, v V, ttl time.Duration) error
	Range(ctx context.Context, fn func(K, V) bool) error
}

// Counter%[1]s adds numbers.
//
//breaker:name=counter%[1]s
type Counter%[1]s[N Number] interface {
	Add(ctx context.Context, key string, n N) (N, error)
	Sum(ctx context.Context, keys []string) (N, error)
}

// Gateway%[1]s calls a typed HTTP API.
//
//breaker:name=gateway%[1]s ratelimit=10/5
type Gateway%[1]s[Req, Resp any] interface {
	Call(ctx context.Context, r Req, h http.Header) (Resp, *http.Response, error)
	Stream(ctx context.Context, r Req) (<-chan Resp, error)
	Handler() http.Handler
}
`, s)
	}
	return fixture{name: "httpgen", interfaces: names, methods: 10 * (5 + 4 + 2 + 3),
		files: []file{{name: "httpgen.go", src: b.String(), ifaces: true}}}
}

// writeFixtures lays out a module in dir: its go.mod, and a directory a
// fixture.
func writeFixtures(dir, gomod string, fs []fixture) error {
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	for _, f := range fs {
		pkg := filepath.Join(dir, f.name)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			return err
		}
		for _, src := range f.files {
			if err := os.WriteFile(filepath.Join(pkg, src.name), []byte(src.src), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
