package breakerimpl

import (
	"io"
	"reflect"
)

// CloseStream closes a stream that no caller will see: the answer of a try
// that a retry replaced, of a source that a chain passed over, or of a
// race's loser (an io.ReadCloser, an *os.File, a net.Conn). A nil stream
// is left alone, and so is a nil pointer in a non-nil interface, which a
// constructor that failed may return beside its error (gzip.NewReader's
// *gzip.Reader). A Close that panics is let be: the stream is nobody's
// now, and the call that replaced it, which holds a breaker's slot, must
// not fail for it.
func CloseStream(c io.Closer) {
	if c == nil || isNil(reflect.ValueOf(c)) {
		return
	}
	defer func() { _ = recover() }()
	_ = c.Close()
}

// isNil reports whether v is a nil pointer, map, slice, channel or func.
func isNil(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}
