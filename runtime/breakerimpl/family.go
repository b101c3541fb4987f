package breakerimpl

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/internal/core"
)

// Family is what a generated wrapper calls for a method with `key=PARAM`:
// one [Route] per distinct key, through the breaker "<name>/<key>" of a
// [runtime.Family]. Get one from [NewFamily]. A Family is safe for
// concurrent use.
type Family struct {
	f      *runtime.Family
	refuse *Route                        // when the implementation is nil: every key's route, refusing with ErrNilImpl
	attach func(*runtime.Breaker) *Route // a new route through a key's breaker, for unheld

	mu     sync.Mutex
	byHand map[*runtime.Breaker]*Route // the routes unheld made
}

// Keyed is one call's route on a [Family]: generated code enters its
// Route, and defers [Keyed.Done] before it.
type Keyed struct {
	Route *Route
	key   runtime.FamilyKey
}

// Done ends the call on its key: the key's breaker may be dropped again.
func (k Keyed) Done() { k.key.Done() }

// NewFamily returns a family of routes for calls to impl, one per key, each
// with cfg's settings and the breaker named cfg.Breaker.Name + "/" + key;
// keys (0: [runtime.DefaultFamilyKeys]) bounds how many live at once and
// maxOpen (a percentage, 0: no cap) how many may be OPEN at once (see
// [runtime.Family]). A nil reg is [runtime.Default]. The keys share the
// family's limiter, when cfg has a rate limit. Like routes of one breaker,
// the wrappers made with one name on one registry share the family: its
// first NewFamily makes every key's route, with that call's cfg. A family
// made by hand with the name before ([runtime.Registry.Family]) is the
// family, its settings kept: its keys made from then on hold their routes
// as any key does, and each Family makes a route for a key made before
// it, once, on the key's first call. When impl is nil every call is
// refused with [ErrNilImpl].
func NewFamily(reg *runtime.Registry, impl any, cfg RouteConfig, keys, maxOpen int) *Family {
	if reg == nil {
		reg = runtime.Default()
	}
	var f *runtime.Family
	attach := func(kr *keyRoute, b *runtime.Breaker) any {
		initRoute(&kr.Route, reg, anyImpl, cfg, b, f.Limiter())
		kr.Route.recordCalls(reg, anyImpl, cfg, b, f.Limiter()) // record.go
		return kr
	}
	f = core.Family(reg, cfg.Breaker, runtime.FamilyConfig{Keys: keys, MaxOpen: maxOpen, Rate: cfg.Rate, Burst: cfg.Burst},
		&core.KeyMaker[runtime.Breaker]{
			Room: func() (*runtime.Breaker, func(*runtime.Breaker) any) {
				kr := new(keyRoute)
				return &kr.b, func(b *runtime.Breaker) any { return attach(kr, b) }
			},
			// A key's breaker that existed before (made by hand) stays
			// where it is, its room unused.
			Attach: func(b *runtime.Breaker) any { return attach(new(keyRoute), b) },
		}).(*runtime.Family)
	if impl == nil {
		return &Family{f: f, refuse: &Route{fails: &nilImpl.state.fails, reject: &nilImpl.reject, slow: core.FastMask}}
	}
	return &Family{f: f, attach: func(b *runtime.Breaker) *Route { return &attach(new(keyRoute), b).(*keyRoute).Route }}
}

// keyRoute is a key's route, which holds the key's entry in the family
// ([core.KeyHolder]), followed by the room the family makes the key's
// breaker in ([core.KeyMaker]). Go's allocator puts an object of more
// than 512 bytes that holds pointers in a block of a size class, a
// multiple of 64 bytes and aligned to it, after a header of 8 bytes
// (mallocHeader). The lead puts the entry's hot bytes (its key, count in
// flight and last use) at the start of a line, and the route's state and
// slow words, then the breaker's state and fails words, follow them:
// everything a CLOSED success on the key reads but its slot in the
// family's table is one line. The tail fills the block.
// TestKeyRouteHotLine keeps the layout and the padding in step with Route,
// runtime's Breaker and the allocator, on real keys.
type keyRoute struct {
	_ [keyRouteLead]byte
	Route
	b runtime.Breaker
	_ [keyRouteTail]byte
}

const (
	mallocHeader = 8                                                                    // before an object in a block, see keyRoute
	keyRouteHot  = unsafe.Offsetof(Route{}.key) + unsafe.Offsetof(Route{}.key.Inflight) // the entry's hot bytes in a Route
	keyRouteLead = (64 - (mallocHeader+keyRouteHot)%64) % 64
	keyRouteTail = (64 - (mallocHeader+keyRouteLead+unsafe.Sizeof(Route{})+unsafe.Sizeof(runtime.Breaker{}))%64) % 64
)

// KeyEntry returns the key's entry in its family.
func (kr *keyRoute) KeyEntry() *core.KeyEntry[runtime.Breaker] { return &kr.key }

// unheld returns the route of key k of a family made by hand before f
// (see NewFamily), which holds none: one f makes for its breaker on the
// key's first call and keeps. Only keys made before the family had routes
// come here, so f keeps a bounded number of them. Key, KeyInt and KeyUint
// test for such a key themselves, before routeOf: as a function of its
// own the test would not inline, and would cost every call a call.
//
//go:noinline
func (f *Family) unheld(k runtime.FamilyKey) *Route {
	b := k.Breaker()
	f.mu.Lock()
	defer f.mu.Unlock()
	rt, ok := f.byHand[b]
	if !ok {
		if f.byHand == nil {
			f.byHand = make(map[*runtime.Breaker]*Route)
		}
		rt = f.attach(b)
		f.byHand[b] = rt
	}
	return rt
}

// routeOf returns the route of a held key: the one that holds its entry.
// A runtime.FamilyKey is one pointer, to the key's entry (TestRouteOf),
// which in a family of NewFamily is always the key field of a keyRoute's
// Route, held (core.KeyHeld): both functions of the family's
// core.KeyMaker return a keyRoute. An entry of any other family (one
// made by hand with the name, runtime's Registry.Family, before a
// wrapper) holds nothing: see Family.unheld.
func routeOf(k runtime.FamilyKey) *Route {
	return (*Route)(unsafe.Add(unsafe.Pointer(entryOf(k)), -int(unsafe.Offsetof(Route{}.key))))
}

// entryOf returns the entry of key k (see routeOf).
func entryOf(k runtime.FamilyKey) *core.KeyEntry[runtime.Breaker] {
	return *(**core.KeyEntry[runtime.Breaker])(unsafe.Pointer(&k))
}

// anyImpl is the implementation a family's routes are made with: a nil
// one is refused before any key's route is reached (Family.refuse).
var anyImpl = struct{}{}

// Runtime returns the family's [runtime.Family].
func (f *Family) Runtime() *runtime.Family { return f.f }

// Key returns the route of a string key. It allocates nothing for a live key.
func (f *Family) Key(key string) Keyed {
	if f.refuse != nil {
		return Keyed{Route: f.refuse}
	}
	k := f.f.Enter(key)
	if entryOf(k).Flags&core.KeyHeld == 0 {
		return Keyed{f.unheld(k), k}
	}
	return Keyed{routeOf(k), k}
}

// KeyInt returns the route of an integer key, its decimal form. It
// allocates nothing for a live key.
func (f *Family) KeyInt(key int64) Keyed {
	if f.refuse != nil {
		return Keyed{Route: f.refuse}
	}
	k := f.f.EnterInt(key)
	if entryOf(k).Flags&core.KeyHeld == 0 {
		return Keyed{f.unheld(k), k}
	}
	return Keyed{routeOf(k), k}
}

// KeyUint is KeyInt for an unsigned key.
func (f *Family) KeyUint(key uint64) Keyed {
	if f.refuse != nil {
		return Keyed{Route: f.refuse}
	}
	k := f.f.EnterUint(key)
	if entryOf(k).Flags&core.KeyHeld == 0 {
		return Keyed{f.unheld(k), k}
	}
	return Keyed{routeOf(k), k}
}

// KeyString returns the route of a fmt.Stringer key (its String()); a nil
// one is the key "<nil>", and so is a nil pointer whose String panics (as
// fmt prints it).
func (f *Family) KeyString(key fmt.Stringer) Keyed {
	if key == nil {
		return f.Key("<nil>")
	}
	if (*[2]unsafe.Pointer)(unsafe.Pointer(&key))[1] == nil {
		return f.Key(nilString(key))
	}
	return f.Key(key.String())
}

// nilString is the String of key, a nil pointer (or map, chan or func), or
// "<nil>" when it panics, as fmt's %v has it.
func nilString(key fmt.Stringer) (s string) {
	defer func() {
		if recover() != nil {
			s = "<nil>"
		}
	}()
	return key.String()
}
