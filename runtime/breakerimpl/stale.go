package breakerimpl

import (
	"math"
	"sync"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// DefaultStaleSize is how many entries a [StaleCache] keeps per method
// unless the `stalesize` key says otherwise.
const DefaultStaleSize = 1024

// StaleCache keeps the last valid result per argument key for a while, so
// that a call every source failed can still be answered with data that is
// recent enough (the `stale` key). It holds at most size entries, evicting
// the least recently used. Values are stored as given, not copied. The zero
// value is not usable; it is safe for concurrent use.
type StaleCache[K comparable, V any] struct {
	clock runtime.Clock
	ttl   time.Duration

	size int // the most entries kept

	mu    sync.Mutex // guards the fields below
	index map[K]int32
	nodes []staleNode[K, V] // at most size; a doubly linked LRU list by index
	head  int32             // most recently used, -1 when empty
	tail  int32             // least recently used
}

type staleNode[K comparable, V any] struct {
	key        K
	val        V
	at         time.Time
	prev, next int32
}

// NewStaleCache returns a cache of at most size entries (DefaultStaleSize
// when size < 1, and at most [math.MaxInt32]) that serves entries younger
// than ttl, on reg's clock. Its memory grows with the entries it holds,
// up to size: a large size reserves nothing.
func NewStaleCache[K comparable, V any](reg *runtime.Registry, ttl time.Duration, size int) *StaleCache[K, V] {
	if reg == nil {
		reg = runtime.Default()
	}
	if size < 1 {
		size = DefaultStaleSize
	}
	size = min(size, math.MaxInt32) // nodes are indexed by int32
	first := min(size, staleFirst)
	return &StaleCache[K, V]{clock: reg.Clock(), ttl: ttl, size: size, index: make(map[K]int32, first),
		nodes: make([]staleNode[K, V], 0, first), head: -1, tail: -1}
}

// staleFirst is the most entries a new StaleCache makes room for before
// it holds any: a `stalesize` is a bound, not a reservation (a wrapper's
// constructor made every method's cache whole, 2 GB for stalesize=10000000).
const staleFirst = 64

// Put stores v as the latest valid result for key. A key that cannot be
// hashed (an interface-typed argument holding a slice, say) is not stored.
// Storing an existing key allocates nothing.
func (c *StaleCache[K, V]) Put(key K, v V) {
	defer func() { _ = recover() }() // an unhashable dynamic key: not cached
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.index[key]
	switch {
	case ok:
	case len(c.nodes) < c.size:
		c.nodes = append(c.nodes, staleNode[K, V]{key: key, prev: -1, next: -1})
		i = int32(len(c.nodes) - 1)
		c.index[key] = i
		c.pushFront(i)
	default: // evict the least recently used
		i = c.tail
		delete(c.index, c.nodes[i].key)
		c.nodes[i].key = key
		c.index[key] = i
	}
	c.nodes[i].val, c.nodes[i].at = v, now
	c.touch(i)
}

// Get returns the result stored for key and its age, if it is younger than
// the cache's limit.
func (c *StaleCache[K, V]) Get(key K) (v V, age time.Duration, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	i, found := c.index[key]
	if !found {
		return v, 0, false
	}
	age = now.Sub(c.nodes[i].at)
	if age >= c.ttl {
		return v, age, false
	}
	c.touch(i)
	return c.nodes[i].val, age, true
}

// Len returns the number of entries held.
func (c *StaleCache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.index)
}

func (c *StaleCache[K, V]) touch(i int32) {
	if c.head == i {
		return
	}
	c.unlink(i)
	c.pushFront(i)
}

func (c *StaleCache[K, V]) unlink(i int32) {
	n := &c.nodes[i]
	if n.prev >= 0 {
		c.nodes[n.prev].next = n.next
	} else if c.head == i {
		c.head = n.next
	}
	if n.next >= 0 {
		c.nodes[n.next].prev = n.prev
	} else if c.tail == i {
		c.tail = n.prev
	}
	n.prev, n.next = -1, -1
}

func (c *StaleCache[K, V]) pushFront(i int32) {
	n := &c.nodes[i]
	n.prev, n.next = -1, c.head
	if c.head >= 0 {
		c.nodes[c.head].prev = i
	}
	c.head = i
	if c.tail < 0 {
		c.tail = i
	}
}
