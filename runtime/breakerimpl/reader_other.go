//go:build !unix

package breakerimpl

import (
	"io"
	"os"
)

// fileOffset returns f's offset. f is not nil.
func fileOffset(f *os.File) (int64, error) { return f.Seek(0, io.SeekCurrent) }
