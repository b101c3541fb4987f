package breakerimpl

import (
	"fmt"
	"io"

	"github.com/breakergen/breakergen/runtime"
)

// Reader is a reader argument of a guarded method (an io.Reader, or
// another argument with Read) as a retry or a chain's next source sends
// it again: [Mark] notes where it is before the first try reads it, and
// [Reader.Rewind] seeks it back there before a later try. A reader that
// is no io.Seeker, or whose Seek fails, is sent once. The zero value is a
// nil reader, which every try sends as it is. A Reader is used by one
// try at a time: a chain asks its sources in order, and a method with a
// reader argument is never hedged.
type Reader struct {
	s   io.Seeker // nil when there is nothing to seek back
	pos int64     // where s was before the first try
	err error     // why r cannot be read again, or nil
}

// Mark notes where r is before the first try of a call reads it: its
// offset when it is an io.Seeker (Seek(0, io.SeekCurrent)).
func Mark(r io.Reader) Reader {
	if r == nil {
		return Reader{}
	}
	s, ok := r.(io.Seeker)
	if !ok {
		return Reader{err: runtime.ErrUnrewindable}
	}
	pos, err := seekCurrent(s)
	if err != nil {
		return Reader{err: fmt.Errorf("%w: Seek: %w", runtime.ErrUnrewindable, err)}
	}
	return Reader{s: s, pos: pos}
}

// seekCurrent returns s's offset; a nil pointer in the io.Reader (which
// its own Seek may not allow) is one that cannot be sought.
func seekCurrent(s io.Seeker) (pos int64, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return s.Seek(0, io.SeekCurrent)
}

// Rewind readies the reader for another try, after an earlier one may
// have read it: it seeks it back to where [Mark] found it. It returns an
// error matching [runtime.ErrUnrewindable] when the reader cannot be read
// again (no io.Seeker, or Seek failed): generated code then makes no
// further try with it, as with a request's body (httpguard.Rewind).
func (x *Reader) Rewind() error {
	if x.s == nil {
		return x.err
	}
	if _, err := x.s.Seek(x.pos, io.SeekStart); err != nil {
		x.s, x.err = nil, fmt.Errorf("%w: Seek: %w", runtime.ErrUnrewindable, err)
		return x.err
	}
	return nil
}
