package breakerimpl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/breakergen/breakergen/runtime"
)

// Reader is a reader argument of a guarded method (an io.Reader, or
// another body the generator takes for one) as a retry or a chain's next
// source sends it again: [Mark] notes where it is before the first try
// reads it, and [Reader.Rewind] seeks it back there before a later try. A
// reader that is no io.Seeker, or whose Seek fails, is sent once. The
// zero value is a nil reader, which every try sends as it is. A Reader
// is used by one try at a time: a chain asks its sources in order, and a
// method with a reader argument is never hedged.
type Reader struct {
	s   io.Seeker // nil when there is nothing to seek back
	pos int64     // where s was before the first try
	// cause is why Mark could not note where the reader was (its Seek's
	// error), kept as it is: Mark runs on every call, and only Rewind,
	// when a later try needs the reader, wraps it (into err).
	cause error
	err   error // why the reader cannot be read again, or nil
}

// errSeekPanicked is the cause of a reader whose Seek panicked with
// something other than an error (a nil pointer's panics with a
// runtime.Error, which is kept).
var errSeekPanicked = errors.New("the reader's Seek panicked")

// Mark notes where r is before the first try of a call reads it: its
// offset when it is an io.Seeker. It allocates nothing, whatever r is:
// an in-memory *strings.Reader or *bytes.Reader is read from its length
// (no Seek), an *os.File costs one lseek, and a Seek that fails (a pipe)
// or panics (a nil pointer) is kept as it is, for [Reader.Rewind].
func Mark(r io.Reader) Reader {
	switch r := r.(type) {
	case nil:
		return Reader{}
	case *strings.Reader:
		if r != nil {
			return Reader{s: r, pos: r.Size() - int64(r.Len())}
		}
	case *bytes.Reader:
		if r != nil {
			return Reader{s: r, pos: r.Size() - int64(r.Len())}
		}
	case *os.File:
		if r == nil {
			return Reader{cause: os.ErrInvalid}
		}
		pos, err := fileOffset(r)
		if err != nil {
			return Reader{cause: err}
		}
		return Reader{s: r, pos: pos}
	}
	s, ok := r.(io.Seeker)
	if !ok {
		return Reader{err: runtime.ErrUnrewindable}
	}
	pos, err := seekCurrent(s)
	if err != nil {
		return Reader{cause: err}
	}
	return Reader{s: s, pos: pos}
}

// seekCurrent returns s's offset; a nil pointer in the io.Reader (which
// its own Seek may not allow) is one that cannot be sought. Its panic is
// kept as the error, not formatted: Mark allocates nothing.
func seekCurrent(s io.Seeker) (pos int64, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = errSeekPanicked
			if e, ok := v.(error); ok {
				err = e
			}
		}
	}()
	return s.Seek(0, io.SeekCurrent)
}

// Rewind readies the reader for another try, after an earlier one may
// have read it: it seeks it back to where [Mark] found it. It returns an
// error matching [runtime.ErrUnrewindable] (and the Seek's error, if
// one failed) when the reader cannot be read again (no io.Seeker, or
// Seek failed): generated code then makes no further try with it, as
// with a request's body (httpguard.Rewind).
func (x *Reader) Rewind() error {
	if x.s == nil {
		if x.cause != nil {
			x.err, x.cause = unrewindable(x.cause), nil
		}
		return x.err
	}
	if _, err := x.s.Seek(x.pos, io.SeekStart); err != nil {
		x.s, x.err = nil, unrewindable(err)
		return x.err
	}
	return nil
}

// unrewindable is the error of a reader whose Seek failed with err.
func unrewindable(err error) error {
	return fmt.Errorf("%w: Seek: %w", runtime.ErrUnrewindable, err)
}
