package breakerimpl

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// TestKeyRouteHotLine: a key's route fills its allocator's block, and
// everything a CLOSED success on the key reads but its table slot lies in
// one line (see keyRoute): the entry's hot bytes (from Inflight to the end
// of Kbuf), the route's fails pointer and slow word, and the key's
// breaker's state and fails words, the breaker made in the route's room.
// It looks at real keys: their allocations, not only the offsets.
func TestKeyRouteHotLine(t *testing.T) {
	if n := unsafe.Sizeof(keyRoute{}); (n+mallocHeader)%64 != 0 {
		t.Errorf("keyRoute is %d bytes (Route %d), with the allocator's header not a multiple of 64: change its padding", n, unsafe.Sizeof(Route{}))
	}
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k"}}, 100, 0)
	for i := range 100 {
		k := f.KeyInt(int64(i))
		kr, ok := entryOf(k.key).Val.(*keyRoute)
		if !ok {
			t.Fatalf("the key's value is %T, want *keyRoute", entryOf(k.key).Val)
		}
		if k.Route.Breaker() != &kr.b {
			t.Fatalf("key %d: its breaker is not in its route's room", i)
		}
		c := core.BreakerOf(k.Route.Breaker())
		rt := k.Route
		line := uintptr(unsafe.Pointer(&rt.key.Inflight)) / 64
		at := func(p unsafe.Pointer) uintptr { return uintptr(p) }
		for name, p := range map[string]uintptr{
			"the entry's Inflight":           at(unsafe.Pointer(&rt.key.Inflight)),
			"the entry's Used":               at(unsafe.Pointer(&rt.key.Used)),
			"the entry's Klen":               at(unsafe.Pointer(&rt.key.Klen)),
			"the entry's Flags":              at(unsafe.Pointer(&rt.key.Flags)),
			"the entry's last key byte":      at(unsafe.Pointer(&rt.key.Kbuf[len(rt.key.Kbuf)-1])),
			"the route's fails pointer":      at(unsafe.Pointer(&rt.fails)),
			"the route's slow word":          at(unsafe.Pointer(&rt.slow)),
			"the breaker's state word":       at(unsafe.Pointer(c.State)),
			"the breaker's fails word":       at(unsafe.Pointer(c.Fails)) + 7,
			"the state word EnterFast reads": at(unsafe.Pointer(rt.stateWord())),
			"the fails word Done reads":      at(unsafe.Pointer(rt.fails)) + 7,
		} {
			if p/64 != line {
				t.Errorf("key %d: %s at %#x, off the line %#x of the entry's hot bytes", i, name, p, line*64)
			}
		}
		k.Done()
	}
}

// TestRouteOf: a runtime.FamilyKey is one pointer, to the key's entry,
// which routeOf reads.
func TestRouteOf(t *testing.T) {
	if n := unsafe.Sizeof(runtime.FamilyKey{}); n != unsafe.Sizeof((*core.KeyEntry[runtime.Breaker])(nil)) {
		t.Fatalf("runtime.FamilyKey is %d bytes: routeOf reads it as a pointer to the key's entry", n)
	}
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k"}}, 10, 0)
	k := f.Key("a")
	defer k.Done()
	kr, ok := entryOf(k.key).Val.(*keyRoute)
	if !ok {
		t.Fatalf("the key's value is %T, want *keyRoute", entryOf(k.key).Val)
	}
	if k.Route != &kr.Route {
		t.Errorf("routeOf gives %p, want the key's route %p", k.Route, &kr.Route)
	}
	if k.Route.Breaker().Name() != "k/a" {
		t.Errorf("the key's route is breaker %q's", k.Route.Breaker().Name())
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
	kr, ok := entryOf(k.key).Val.(*keyRoute)
	if !ok {
		t.Fatalf("the key's value is %T, want *keyRoute", entryOf(k.key).Val)
	}
	if k.Route.Breaker() != hand || k.Route.Breaker() == &kr.b {
		t.Fatalf("the key's breaker is %p, want the one made by hand %p (its room %p unused)", k.Route.Breaker(), hand, &kr.b)
	}
	c := core.BreakerOf(hand)
	if k.Route.stateWord() != c.State || k.Route.fails != failsWord(c.Fails) {
		t.Fatalf("the key's route reads words %p and %p, want the breaker's %p and %p", k.Route.stateWord(), k.Route.fails, c.State, c.Fails)
	}
	// Once any test of the process has used WithBudget or WithProvenance
	// (core.InUse), every call leaves the fast path, as it should.
	call, ok := k.Route.EnterFast()
	if !ok && core.InUse.Load() == 0 {
		t.Fatal("a CLOSED key's call left the fast path")
	}
	if !ok {
		var err error
		if call, err = k.Route.Enter(t.Context()); err != nil {
			t.Fatalf("a CLOSED key's call was refused: %v", err)
		}
	}
	call.Done(t.Context(), nil, false)
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
	if e := entryOf(ka.key); e.Flags&core.KeyHeld != 0 {
		t.Error("a key made before the wrapper holds a route")
	}
	call("b", nil)
	kb := f.Key("b")
	if e := entryOf(kb.key); e.Flags&core.KeyHeld == 0 || kb.Route != routeOf(kb.key) {
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
