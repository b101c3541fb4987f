package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The generator comparison runs every tool on two packages of a throw-away
// module: synth, 200 annotated interfaces of 10 methods each, and httpgen,
// whose signatures use net/http, io, net/url and generics.

const fixtureModule = "example.com/genbench"

// fixture is one package the generators are timed on.
type fixture struct {
	name       string   // package name and directory
	interfaces []string // the interfaces mockgen is asked for
	src        string
}

func fixtures() []fixture {
	return []fixture{synthFixture(), httpFixture()}
}

func synthFixture() fixture {
	var b strings.Builder
	b.WriteString(`// Package synth is a synthetic package: 200 annotated interfaces of 10 methods.
package synth

import (
	"context"
	"time"
)

// Item is what the services store.
type Item struct {
	ID    string
	Tags  []string
	Price float64
}

// Filter selects items.
type Filter struct{ Prefix string }

// Key identifies an item.
type Key struct{ Shard, ID int }

// Event is a change to an item.
type Event struct {
	Item Item
	At   time.Time
}
`)
	var names []string
	for i := range 200 {
		n := fmt.Sprintf("Service%03d", i)
		names = append(names, n)
		fmt.Fprintf(&b, `
// %[1]s is synthetic service %[2]d.
//
//breaker:name=svc%03[2]d threshold=5 reset=30s
type %[1]s interface {
	Get(ctx context.Context, id string) (Item, error)
	List(ctx context.Context, f Filter, limit int) ([]Item, error)
	Put(ctx context.Context, it Item) error
	Delete(ctx context.Context, ids ...string) error
	Count(ctx context.Context) (int, error)
	Watch(ctx context.Context, id string) (<-chan Event, error)
	Apply(ctx context.Context, fn func(Item) bool) (int, error)
	Stats(ctx context.Context, from, to time.Time) (map[string]float64, error)
	Lookup(ctx context.Context, k Key) (*Item, bool, error)
	Close() error
}
`, n, i)
	}
	return fixture{name: "synth", interfaces: names, src: b.String()}
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
	return fixture{name: "httpgen", interfaces: names, src: b.String()}
}

// writeFixtures lays out the module in dir.
func writeFixtures(dir string, fs []fixture) error {
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+fixtureModule+"\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	for _, f := range fs {
		pkg := filepath.Join(dir, f.name)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(pkg, f.name+".go"), []byte(f.src), 0o644); err != nil {
			return err
		}
	}
	return nil
}
