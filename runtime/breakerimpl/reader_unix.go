//go:build unix

package breakerimpl

import (
	"io"
	"os"
	"syscall"
)

// fileOffset returns f's offset, as f.Seek(0, io.SeekCurrent) does, but
// without the *os.PathError that f.Seek allocates when it fails (a pipe,
// a socket, a terminal): the error is the bare syscall.Errno. f is not
// nil.
func fileOffset(f *os.File) (pos int64, err error) {
	c, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	if cerr := c.Control(func(fd uintptr) {
		pos, err = syscall.Seek(int(fd), 0, io.SeekCurrent)
	}); cerr != nil {
		return 0, cerr
	}
	return pos, err
}
