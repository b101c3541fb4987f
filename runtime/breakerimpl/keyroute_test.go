package breakerimpl

import (
	"testing"
	"unsafe"
)

// TestKeyRouteIsLineSized: a key's route is a multiple of a cache line, so
// that its allocation is aligned to one (see keyRoute).
func TestKeyRouteIsLineSized(t *testing.T) {
	if n := unsafe.Sizeof(keyRoute{}); n%64 != 0 {
		t.Errorf("keyRoute is %d bytes (Route %d): change its padding to make it a multiple of 64", n, unsafe.Sizeof(Route{}))
	}
}
