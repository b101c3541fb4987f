package breakerimpl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// TestKeyCellLine: everything a CLOSED success on a key reads but its
// table slot lies in the key's cell, one cache line (see core.KeyEntry):
// the cell's hot bytes, its route and the key's breaker's state and fails
// words, which the key's route and Keyed read too. It looks at real keys:
// their allocations, not only the offsets, and checks that the cells of a
// family's keys lie side by side.
func TestKeyCellLine(t *testing.T) {
	if n := unsafe.Sizeof(core.KeyEntry[runtime.Breaker]{}); n != 64 {
		t.Fatalf("a key's cell is %d bytes, want 64", n)
	}
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k"}}, 100, 0)
	var pages = map[uintptr]bool{}
	for i := range 100 {
		k := f.KeyInt(int64(i))
		e := entryOf(k.key)
		kr, ok := e.Cold.Load().Val.(*keyRoute)
		if !ok {
			t.Fatalf("the key's value is %T, want *keyRoute", e.Cold.Load().Val)
		}
		if k.Route != &kr.Route || k.Route.Breaker() != &kr.b {
			t.Fatalf("key %d: its route or its breaker is not its keyRoute's", i)
		}
		c := core.BreakerOf(k.Route.Breaker())
		at := func(p unsafe.Pointer) uintptr { return uintptr(p) }
		base := at(unsafe.Pointer(e))
		if base%64 != 0 {
			t.Fatalf("key %d: its cell at %#x is not on a line of its own", i, base)
		}
		pages[base/4096] = true
		for name, p := range map[string]uintptr{
			"the breaker's state word":        at(unsafe.Pointer(c.State)),
			"the breaker's fails word":        at(unsafe.Pointer(c.Fails)) + 7,
			"the state word EnterFast reads":  at(unsafe.Pointer(k.Route.stateWord())),
			"the fails word Call.Done reads":  at(unsafe.Pointer(k.Route.fails)) + 7,
			"the fails word Keyed.Exit reads": at(unsafe.Pointer(k.fails())) + 7,
		} {
			if p/64 != base/64 {
				t.Errorf("key %d: %s at %#x, off its cell's line %#x", i, name, p, base)
			}
		}
		if k.slow() != k.Route.slow {
			t.Errorf("key %d: the cell's slow word %#x, the route's %#x", i, k.slow(), k.Route.slow)
		}
		k.Done()
	}
	// 100 cells of 64 bytes, in chunks of 32 cells (runtime's famChunk,
	// about 2 KiB): on at most 2 pages a chunk, not on 100.
	if len(pages) > 8 {
		t.Errorf("100 keys' cells lie on %d pages, want them side by side", len(pages))
	}
}

// TestRouteOf: a runtime.FamilyKey is two pointers, the first to the
// key's cell, which routeOf reads: on the key's first call (counted in the
// cell) and on later ones (in a counter of the key's bucket). A Keyed is
// four words, which the generated code copies in registers (see Keyed).
func TestRouteOf(t *testing.T) {
	if n := unsafe.Sizeof(runtime.FamilyKey{}); n != 2*unsafe.Sizeof((*core.KeyEntry[runtime.Breaker])(nil)) {
		t.Fatalf("runtime.FamilyKey is %d bytes: routeOf reads its first word as a pointer to the key's cell", n)
	}
	if n := unsafe.Sizeof(Keyed{}); n != 4*unsafe.Sizeof(uintptr(0)) {
		t.Errorf("a Keyed is %d bytes, want four words", n)
	}
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k"}}, 10, 0)
	k := f.Key("a")
	defer k.Done()
	kr, ok := entryOf(k.key).Cold.Load().Val.(*keyRoute)
	if !ok {
		t.Fatalf("the key's value is %T, want *keyRoute", entryOf(k.key).Cold.Load().Val)
	}
	if k.Route != &kr.Route || routeOf(k.key) != k.Route {
		t.Errorf("routeOf gives %p, want the key's route %p", routeOf(k.key), &kr.Route)
	}
	if k.Route.Breaker().Name() != "k/a" {
		t.Errorf("the key's route is breaker %q's", k.Route.Breaker().Name())
	}
	// A later call on the live key counts in its bucket: the same cell
	// and route.
	k2 := f.Key("a")
	defer k2.Done()
	if entryOf(k2.key) != entryOf(k.key) || k2.Route != k.Route || routeOf(k2.key) != k.Route {
		t.Errorf("a second call on the key finds cell %p and route %p, want %p and %p",
			entryOf(k2.key), k2.Route, entryOf(k.key), k.Route)
	}
}

// TestKeyBreakerHotLine: what a call on a key reads of the key's breaker,
// its state word (EnterFast) and its fails word (Call.Done), lie in one
// cache line, so that a keyed success misses on one line of the breaker,
// not two. It looks at the breakers of real keys: their allocation, not
// only the struct's offsets.
func TestKeyBreakerHotLine(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k"}}, 100, 0)
	for i := range 100 {
		k := f.KeyInt(int64(i))
		c := core.BreakerOf(k.Route.Breaker())
		if s, fl := uintptr(unsafe.Pointer(c.State)), uintptr(unsafe.Pointer(c.Fails)); s/64 != fl/64 {
			t.Fatalf("key %d: the breaker's state word at %#x and fails word at %#x are on two cache lines", i, s, fl)
		}
		k.Done()
	}
}

// TestKeyRouteOfBreakerMadeBefore: a key whose breaker was made by hand
// before the key's first call keeps that breaker (its route's room stays
// unused), and its route reads that breaker's words.
func TestKeyRouteOfBreakerMadeBefore(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	hand := reg.Breaker(runtime.Config{Name: "k/a"})
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k"}}, 10, 0)
	k := f.Key("a")
	defer k.Done()
	kr, ok := entryOf(k.key).Cold.Load().Val.(*keyRoute)
	if !ok {
		t.Fatalf("the key's value is %T, want *keyRoute", entryOf(k.key).Cold.Load().Val)
	}
	if k.Route.Breaker() != hand || k.Route.Breaker() == &kr.b {
		t.Fatalf("the key's breaker is %p, want the one made by hand %p (its room %p unused)", k.Route.Breaker(), hand, &kr.b)
	}
	c := core.BreakerOf(hand)
	if k.Route.stateWord() != c.State || k.Route.fails != failsWord(c.Fails) {
		t.Fatalf("the key's route reads words %p and %p, want the breaker's %p and %p", k.Route.stateWord(), k.Route.fails, c.State, c.Fails)
	}
	if k.fails() != failsWord(c.Fails) {
		t.Fatalf("the key reads fails word %p, want the breaker's %p", k.fails(), c.Fails)
	}
	// Once any test of the process has used WithBudget or WithProvenance
	// (core.InUse), every call leaves the fast path, as it should.
	call, ok := k.EnterFast()
	if !ok && core.InUse.Load() == 0 {
		t.Fatal("a CLOSED key's call left the fast path")
	}
	if !ok {
		var err error
		if call, err = k.Route.Enter(t.Context()); err != nil {
			t.Fatalf("a CLOSED key's call was refused: %v", err)
		}
	}
	k.Exit(call, t.Context(), nil, false)
}

// TestKeyOfFamilyMadeByHand: a family made by hand with a wrapper's name
// before the wrapper is the wrapper's family. A key made before it gets a
// route the wrapper makes once, on its first call; a key made after holds
// its route, as in a family the wrapper made. Each key trips alone, and the
// routes have the wrapper's settings (its timeout), the breakers the
// family's.
func TestKeyOfFamilyMadeByHand(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	hand := reg.Family(runtime.Config{Name: "k", FailureThreshold: 1}, runtime.FamilyConfig{Keys: 10})
	before := hand.Breaker("a")
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k", FailureThreshold: 1}, Timeout: time.Second}, 10, 0)
	if f.Runtime() != hand {
		t.Fatal("NewFamily made a second family of the name")
	}
	ctx := context.Background()
	call := func(key string, err error) {
		t.Helper()
		k := f.Key(key)
		defer k.Done()
		if k.Route == nil || k.Route.timeout != time.Second {
			t.Fatalf("key %q: route %+v, want one with the wrapper's timeout", key, k.Route)
		}
		c, rerr := k.Route.Enter(ctx)
		if rerr != nil {
			t.Fatalf("key %q refused: %v", key, rerr)
		}
		c.Exit(ctx, &err)
	}
	call("a", nil)
	ka := f.Key("a")
	if ka.Route != f.Key("a").Route {
		t.Error("a key made before the wrapper gets a new route on each call")
	}
	ka.Done()
	f.Key("a").Done()
	if e := entryOf(ka.key); e.Route != nil {
		t.Error("a key made before the wrapper holds a route")
	}
	call("b", nil)
	kb := f.Key("b")
	if e := entryOf(kb.key); e.Route == nil || kb.Route != routeOf(kb.key) {
		t.Error("a key made after the wrapper does not hold its route")
	}
	kb.Done()

	call("a", errors.New("down"))
	if st := before.State(); st != runtime.Open {
		t.Errorf("key a made by hand is %v after a failure, want OPEN", st)
	}
	kb = f.Key("b")
	if st := kb.Route.breaker.State(); st != runtime.Closed {
		t.Errorf("key b is %v after a's failure, want CLOSED", st)
	}
	kb.Done()
	call("b", errors.New("down"))
	if b, ok := reg.Lookup("k/b"); !ok || b.State() != runtime.Open {
		t.Errorf("key b after its own failure: %v (live %v), want OPEN", b, ok)
	}
}

type ptrKey struct{ id int }

func (k *ptrKey) String() string { return fmt.Sprint(k.id) }

type nilSafeKey struct{}

func (k *nilSafeKey) String() string {
	if k == nil {
		return "none"
	}
	return "some"
}

// TestKeyStringTypedNil: KeyString's nil Stringer is the key "<nil>"; so is
// a nil pointer whose String panics (it reads a field), as fmt prints it,
// while a nil pointer whose String answers is keyed by that answer.
func TestKeyStringTypedNil(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "api"}}, 0, 0)
	for _, c := range []struct {
		key  fmt.Stringer
		want string
	}{
		{nil, "api/<nil>"},
		{(*ptrKey)(nil), "api/<nil>"},
		{(*nilSafeKey)(nil), "api/none"},
		{&ptrKey{7}, "api/7"},
	} {
		k := f.KeyString(c.key)
		if got := k.Route.Breaker().Name(); got != c.want {
			t.Errorf("KeyString(%#v): breaker %q, want %q", c.key, got, c.want)
		}
		k.Done()
	}
}

// TestKeyedEndsItsHold: the plain keyed body ends the key's hold in its
// deferred closure, and Keyed's Refusal, Enter and Panicked end it when
// they refuse or the call panics: a key left held would never be dropped.
// Each step checks that the key can be dropped afterwards (a family of
// one key, and a new key to make room).
func TestKeyedEndsItsHold(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k", FailureThreshold: 1, ResetTimeout: time.Hour}}, 1, 0)
	ctx := context.Background()
	n := 0
	enter := func(k Keyed) Call {
		t.Helper()
		call, ok := k.EnterFast()
		if !ok {
			var err error
			if call, err = k.Enter(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return call
	}
	droppable := func(what, key string) {
		t.Helper()
		n++
		f.Key(fmt.Sprint("other", n)).Done() // past the bound: key goes if it can
		if _, ok := reg.Lookup("k/" + key); ok {
			t.Errorf("%s: key %q is still live, held", what, key)
		}
	}

	// A success, through the closure's Exit and Done.
	func() {
		k := f.Key("a")
		call := enter(k)
		var err error
		defer func() { k.Exit(call, ctx, err, err == PanicGuard && k.Unreturned(call, ctx, recover())); k.Done() }()
	}()
	droppable("a success", "a")

	// A panic: Panicked ends the hold, and the panic goes on.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		k := f.Key("b")
		call := enter(k)
		err := PanicGuard
		defer func() { k.Exit(call, ctx, err, err == PanicGuard && k.Unreturned(call, ctx, recover())); k.Done() }()
		panic("boom")
	}()
	if b, ok := reg.Lookup("k/b"); ok {
		b.Reset() // the panic opened it; an OPEN key is never dropped
	}
	droppable("a panic", "b")

	// A refusal: the key is OPEN.
	k := f.Key("c")
	fail, err := k.Route.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	down := errors.New("down")
	fail.Exit(ctx, &down) // one failure opens it
	k.Done()
	k = f.Key("c")
	call, _ := k.EnterFast()
	err = k.Refusal(call)
	if err == nil {
		// Once the process has made a budget or provenance record (a
		// test before this one may have), Refusal leaves the rejection to
		// Enter, which writes it in the ctx's record: as generated code.
		_, err = k.Enter(ctx)
	}
	if !errors.Is(err, runtime.ErrOpen) {
		t.Fatalf("Refusal of an OPEN key: %v", err)
	}
	k.Route.Breaker().Reset()
	droppable("a refusal", "c")

	// Enter refused: no budget left.
	k = f.Key("d")
	if _, err := k.Enter(runtime.WithBudget(ctx, 0)); !errors.Is(err, runtime.ErrBudget) {
		t.Fatalf("Enter with no budget: %v", err)
	}
	droppable("a refused Enter", "d")
}

// TestKeyFlagsSetBeforePublished: a key's cell is read with no lock as
// soon as a table has it (Key reads its flags), so the family sets every
// flag first: two goroutines make each new integer-form key (in both
// tables) at once, and the race detector says if a flag is written after.
func TestKeyFlagsSetBeforePublished(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "flags"}}, 1000, 0)
	for i := range 2000 {
		key := strconv.Itoa(i)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				k := f.Key(key)
				if k.Route == nil || k.Route.Breaker().Name() != "flags/"+key {
					t.Errorf("key %s: route %v", key, k.Route)
				}
				k.Done()
			})
		}
		wg.Wait()
	}
}
