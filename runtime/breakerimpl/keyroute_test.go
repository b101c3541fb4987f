package breakerimpl

import (
	"strings"
	"testing"
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
	call, ok := k.Route.EnterFast()
	if !ok {
		t.Fatal("a CLOSED key's call left the fast path")
	}
	call.Done(t.Context(), nil, false)
}

// TestKeyOfFamilyMadeByHand: a family made by hand (runtime's
// Registry.Family) before a wrapper's NewFamily with its name is the one
// NewFamily gets, and its keys, which hold no route, panic with a message
// that says so.
func TestKeyOfFamilyMadeByHand(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	hand := reg.Family(runtime.Config{Name: "k"}, runtime.FamilyConfig{Keys: 10})
	f := NewFamily(reg, struct{}{}, RouteConfig{Breaker: runtime.Config{Name: "k"}}, 10, 0)
	if f.Runtime() != hand {
		t.Fatal("NewFamily made a second family of the name")
	}
	defer func() {
		v := recover()
		u, ok := v.(unrouted)
		if !ok {
			t.Fatalf("the key's call panicked with %v (%T), want an unrouted", v, v)
		}
		if msg := u.Error(); !strings.Contains(msg, `"k/a"`) || !strings.Contains(msg, "no route") {
			t.Errorf("the panic says %q", msg)
		}
	}()
	f.Key("a")
	t.Fatal("a key of a family made by hand has a route")
}
