package breakerimpl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
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

// Keyed is one call's route on a [Family], holding its key until
// [Keyed.Done]. A plain keyed method enters the key with
// [Keyed.EnterFast], and when that declines [Keyed.Refusal] and
// [Keyed.Enter], which end the hold when they refuse; its deferred
// closure settles the call with [Keyed.Exit] and then ends the hold:
//
//	defer func() { k.Exit(call, ctx, err, err == breakerimpl.PanicGuard && k.Unreturned(call, ctx, recover())); k.Done() }()
//
// EnterFast and Exit read the key's breaker's words in the key's cell, on
// the line the lookup of the key read, where the Route's would read its
// fields first, on a line of their own. Other keyed methods defer Done
// and use the Route.
type Keyed struct {
	Route *Route
	key   runtime.FamilyKey
	// fw is the key's breaker's fails word (after its state word, see
	// words), plus the code of the Route's slow word in slowWords: in its
	// low bits, as the word is aligned to 8, so that a Keyed is four words,
	// which the generated code copies in registers (with a fifth the
	// copies stalled on loads of two stores: 40% more a keyed call).
	fw unsafe.Pointer
}

// newKeyed returns the Keyed of route rt, hold k, fails word fails and
// slow word slow (one of slowWords).
func newKeyed(rt *Route, k runtime.FamilyKey, fails *uint64, slow uint64) Keyed {
	return Keyed{rt, k, unsafe.Add(unsafe.Pointer(fails), slowCode(slow))}
}

// fails returns the key's breaker's fails word.
func (k Keyed) fails() *uint64 { return (*uint64)(unsafe.Pointer(uintptr(k.fw) &^ 7)) }

// slow returns the Route's slow word.
func (k Keyed) slow() uint64 { return slowWords[uintptr(k.fw)&3] }

// Done ends the call on its key: the key's breaker may be dropped again.
func (k Keyed) Done() { k.key.Done() }

// EnterFast is [Route.EnterFast] on the key's route, reading the key's
// cell rather than the route.
func (k Keyed) EnterFast() (c Call, ok bool) {
	c.word = stateOf(k.fails()).Load()
	c.route = k.Route
	return c, (c.word|core.InUse.Load())&k.slow() == 0
}

// Refusal is [Call.Refusal] for a call on the key, ending the hold when
// it refuses.
func (k Keyed) Refusal(c Call) error {
	err := c.Refusal()
	if err != nil {
		k.key.Done()
	}
	return err
}

// Enter is the Route's [Route.Enter] for a call on the key, ending the
// hold when it refuses.
func (k Keyed) Enter(ctx context.Context) (Call, error) {
	c, err := k.Route.Enter(ctx)
	if err != nil {
		k.key.Done()
	}
	return c, err
}

// Unreturned is [Call.Unreturned] for a call on the key: a panic is
// settled, the hold ended and the panic re-raised; a goroutine that exits
// leaves the hold to the Done that follows in the closure.
func (k Keyed) Unreturned(c Call, ctx context.Context, v any) bool {
	if v != nil {
		defer k.key.Done()
	}
	return c.Unreturned(ctx, v)
}

// Panicked is [Keyed.Unreturned] without the ctx (see [Call.Panicked]).
//
// Deprecated: regenerate the wrapper; it then calls Unreturned.
func (k Keyed) Panicked(c Call, v any) bool {
	if v != nil {
		defer k.key.Done()
	}
	return c.Panicked(v)
}

// Exit is [Call.Done] for a call on the key, reading the key's cell for
// the breaker's failures rather than the route. It does not end the hold:
// Done follows it in the closure (see Keyed).
func (k Keyed) Exit(c Call, ctx context.Context, err error, _ bool) {
	if err != nil || c.word&(core.FastMask|core.ProvFlag)|uint64(uint32(atomic.LoadUint64(k.fails()))) != 0 {
		c.done(ctx, err)
	}
}

// slowWords codes a route's slow word in a key's cell (core.KeyEntry's
// Slow): its three values, which initRoute chooses from.
var slowWords = [4]uint64{core.FastMask, core.FastMask &^ core.WindowFlag, ^uint64(0), ^uint64(0)}

// slowCode returns the code of slow word s in slowWords.
func slowCode(s uint64) uint8 {
	for i, w := range slowWords {
		if w == s {
			return uint8(i)
		}
	}
	panic("breakerimpl: a route's slow word has no code in a key's cell")
}

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
// it, once, on the key's first call. When impl is nil, or holds a nil
// pointer, map, func, chan or slice, every call is refused with
// [ErrNilImpl].
func NewFamily(reg *runtime.Registry, impl any, cfg RouteConfig, keys, maxOpen int) *Family {
	if reg == nil {
		reg = runtime.Default()
	}
	if nilImplOf(impl) {
		impl = nil
	}
	var f *runtime.Family
	build := func(kr *keyRoute, b *runtime.Breaker) {
		// A key's chain answers count as its family's: per key they
		// would be as many series as keys ever seen, in counters never
		// freed (SPEC §15: a family's totals by default).
		initRoute(&kr.Route, reg, anyImpl, cfg, b, f.Limiter(), cfg.Breaker.Name)
		kr.Route.recordCalls(reg, anyImpl, cfg, b, f.Limiter()) // record.go
	}
	attach := func(kr *keyRoute, b *runtime.Breaker, e *core.KeyEntry[runtime.Breaker]) any {
		build(kr, b)
		e.Route, e.Slow = unsafe.Pointer(&kr.Route), slowCode(kr.Route.slow)
		return kr
	}
	f = core.Family(reg, cfg.Breaker, runtime.FamilyConfig{Keys: keys, MaxOpen: maxOpen, Rate: cfg.Rate, Burst: cfg.Burst},
		&core.KeyMaker[runtime.Breaker]{
			Room: func() (*runtime.Breaker, func(*runtime.Breaker, *core.KeyEntry[runtime.Breaker]) any) {
				kr := new(keyRoute)
				return &kr.b, func(b *runtime.Breaker, e *core.KeyEntry[runtime.Breaker]) any { return attach(kr, b, e) }
			},
			// A key's breaker that existed before (made by hand) stays
			// where it is, its room unused.
			Attach: func(b *runtime.Breaker, e *core.KeyEntry[runtime.Breaker]) any { return attach(new(keyRoute), b, e) },
		}).(*runtime.Family)
	if impl == nil {
		// Every key's call is refused through one route named after the
		// family, with ErrNilImpl (a chain passes over it to its fallbacks),
		// made as any route of a nil implementation: its breaker, which no
		// call reaches, is one the registry does not hold.
		b := core.Detached(reg, f.Config()).(*runtime.Breaker)
		return &Family{f: f, refuse: buildRoute(reg, nil, cfg, b, nil)}
	}
	return &Family{f: f, attach: func(b *runtime.Breaker) *Route {
		kr := new(keyRoute)
		build(kr, b)
		return &kr.Route
	}}
}

// keyRoute is a key's route, followed by the room the family makes the
// key's breaker in ([core.KeyMaker]): one allocation. What a call on the
// key reads is in the key's cell (core.KeyEntry), not here.
type keyRoute struct {
	Route
	b runtime.Breaker
}

// unheld returns the route of key k of a family made by hand before f
// (see NewFamily), which has none: one f makes for its breaker on the
// key's first call and keeps. Only keys made before the family had routes
// come here, so f keeps a bounded number of them.
//
//go:noinline
func (f *Family) unheld(k runtime.FamilyKey) Keyed {
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
	return newKeyed(rt, k, rt.fails, rt.slow)
}

// keyedSlow is what Key, KeyInt and KeyUint return for a key whose
// breaker was made by hand before it (its words are its own, the route
// reads them) or whose entry has no route (a family made by hand before
// the wrapper, see Family.unheld). Every other key's route is its entry's
// (core.KeyEntry's Route), and its breaker's words are the entry's (the
// breaker was made for the key: core.KeyWords); each of the three tests
// for that itself: as a function of its own the test would not inline,
// and would cost every call a call.
//
//go:noinline
func (f *Family) keyedSlow(k runtime.FamilyKey) Keyed {
	e := entryOf(k)
	if e.Route == nil {
		return f.unheld(k)
	}
	rt := (*Route)(e.Route)
	return newKeyed(rt, k, rt.fails, rt.slow)
}

// routeOf returns the route of a key of a family of NewFamily.
func routeOf(k runtime.FamilyKey) *Route { return (*Route)(entryOf(k).Route) }

// entryOf returns the entry of key k: a runtime.FamilyKey's first word
// is a pointer to the key's cell (runtime's FamilyKey; TestRouteOf).
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
		return f.refused()
	}
	k := f.f.Enter(key)
	if e := entryOf(k); e.Flags&core.KeyWords != 0 && e.Route != nil {
		return Keyed{(*Route)(e.Route), k, unsafe.Add(unsafe.Pointer(failsWord(&e.Fails)), e.Slow&3)}
	}
	return f.keyedSlow(k)
}

// KeyInt returns the route of an integer key, its decimal form. It
// allocates nothing for a live key.
func (f *Family) KeyInt(key int64) Keyed {
	if f.refuse != nil {
		return f.refused()
	}
	k := f.f.EnterInt(key)
	if e := entryOf(k); e.Flags&core.KeyWords != 0 && e.Route != nil {
		return Keyed{(*Route)(e.Route), k, unsafe.Add(unsafe.Pointer(failsWord(&e.Fails)), e.Slow&3)}
	}
	return f.keyedSlow(k)
}

// KeyUint is KeyInt for an unsigned key.
func (f *Family) KeyUint(key uint64) Keyed {
	if f.refuse != nil {
		return f.refused()
	}
	k := f.f.EnterUint(key)
	if e := entryOf(k); e.Flags&core.KeyWords != 0 && e.Route != nil {
		return Keyed{(*Route)(e.Route), k, unsafe.Add(unsafe.Pointer(failsWord(&e.Fails)), e.Slow&3)}
	}
	return f.keyedSlow(k)
}

// refused is the Keyed of every key of a family of a nil implementation:
// no key is held, and every call is refused with ErrNilImpl.
func (f *Family) refused() Keyed {
	return newKeyed(f.refuse, runtime.FamilyKey{}, &nilImpl.state.fails, core.FastMask)
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
