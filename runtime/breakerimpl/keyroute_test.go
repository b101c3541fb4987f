package breakerimpl

import (
	"testing"
	"unsafe"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// TestKeyRouteHotLine: a key's route is a multiple of a cache line, so
// that its allocation is aligned to one, and what a call on a key reads
// (the route's state, fails and slow words, then its entry's first 40
// bytes, up to IKey) lies in the first line (see keyRoute).
func TestKeyRouteHotLine(t *testing.T) {
	if n := unsafe.Sizeof(keyRoute{}); n%64 != 0 {
		t.Errorf("keyRoute is %d bytes (Route %d): change its padding to make it a multiple of 64", n, unsafe.Sizeof(Route{}))
	}
	var rt Route
	for name, off := range map[string]uintptr{
		"state": unsafe.Offsetof(rt.state), "fails": unsafe.Offsetof(rt.fails), "slow": unsafe.Offsetof(rt.slow),
		"key's hot bytes": unsafe.Offsetof(rt.key) + unsafe.Offsetof(rt.key.IKey) - 1,
	} {
		if off >= 64 {
			t.Errorf("Route's %s at byte %d: past the first cache line", name, off)
		}
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
	kr, ok := k.key.Value().(*keyRoute)
	if !ok {
		t.Fatalf("the key's value is %T, want *keyRoute", k.key.Value())
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
