package breakerimpl_test

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// TestReaderRewind: a seekable reader is read again from where Mark found
// it; one that is no io.Seeker, or whose Seek fails, cannot be; a nil
// reader (or a nil pointer in one) sends nothing twice.
func TestReaderRewind(t *testing.T) {
	r := strings.NewReader("--body")
	_, _ = r.Seek(2, io.SeekStart)
	mark := breakerimpl.Mark(r)
	for range 2 {
		b, _ := io.ReadAll(r)
		assert.Equal(t, "body", string(b))
		require.NoError(t, mark.Rewind())
	}

	mark = breakerimpl.Mark(io.MultiReader(strings.NewReader("body")))
	assert.ErrorIs(t, mark.Rewind(), runtime.ErrUnrewindable)

	pr, pw, err := os.Pipe() // an *os.File whose Seek fails
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	mark = breakerimpl.Mark(pr)
	assert.ErrorIs(t, mark.Rewind(), runtime.ErrUnrewindable)

	mark = breakerimpl.Mark(nil)
	assert.NoError(t, mark.Rewind())
	var none *strings.Reader
	mark = breakerimpl.Mark(none)
	assert.ErrorIs(t, mark.Rewind(), runtime.ErrUnrewindable)

	f := &flaky{Reader: strings.NewReader("body")}
	mark = breakerimpl.Mark(f)
	f.fail = errors.New("seek: device gone")
	err = mark.Rewind()
	assert.ErrorIs(t, err, runtime.ErrUnrewindable)
	assert.ErrorIs(t, err, f.fail)
	assert.ErrorIs(t, mark.Rewind(), runtime.ErrUnrewindable, "once it failed, it stays unrewindable")
}

// flaky is a reader whose Seek fails once fail is set.
type flaky struct {
	*strings.Reader
	fail error
}

func (f *flaky) Seek(off int64, whence int) (int64, error) {
	if f.fail != nil {
		return 0, f.fail
	}
	return f.Reader.Seek(off, whence)
}
