package breakerimpl_test

import (
	"bytes"
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

	var nilFile *os.File
	mark = breakerimpl.Mark(nilFile)
	err = mark.Rewind()
	assert.ErrorIs(t, err, runtime.ErrUnrewindable)
	assert.ErrorIs(t, err, os.ErrInvalid)

	file, err := os.CreateTemp(t.TempDir(), "body")
	require.NoError(t, err)
	defer file.Close()
	_, err = file.WriteString("--body")
	require.NoError(t, err)
	_, err = file.Seek(2, io.SeekStart)
	require.NoError(t, err)
	mark = breakerimpl.Mark(file)
	for range 2 {
		b, _ := io.ReadAll(file)
		assert.Equal(t, "body", string(b), "a file is read again from where Mark found it")
		require.NoError(t, mark.Rewind())
	}

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

// markKinds are the readers Mark meets, each made anew by its func: an
// in-memory reader, a regular file, a pipe (an *os.File whose Seek
// fails), a reader that is no io.Seeker, a nil *os.File, a nil
// *strings.Reader (whose Seek panics) and a nil reader.
func markKinds(tb testing.TB) []struct {
	name string
	r    io.Reader
} {
	tb.Helper()
	f, err := os.CreateTemp(tb.TempDir(), "body")
	require.NoError(tb, err)
	_, err = f.WriteString("body")
	require.NoError(tb, err)
	_, err = f.Seek(1, io.SeekStart)
	require.NoError(tb, err)
	tb.Cleanup(func() { f.Close() })
	pr, pw, err := os.Pipe()
	require.NoError(tb, err)
	tb.Cleanup(func() { pr.Close(); pw.Close() })
	var nilFile *os.File
	var nilString *strings.Reader
	return []struct {
		name string
		r    io.Reader
	}{
		{"strings.Reader", strings.NewReader("body")},
		{"bytes.Reader", bytes.NewReader([]byte("body"))},
		{"file", f},
		{"pipe", pr},
		{"unseekable", io.MultiReader(strings.NewReader("body"))},
		{"nil file", nilFile},
		{"nil strings.Reader", nilString},
		{"nil", nil},
	}
}

// TestMarkAllocs: Mark runs before the first try of every call of a
// method with retries or a chain, so it allocates nothing on any path:
// a Seek that fails (a pipe), a nil pointer, no io.Seeker at all. Only
// Rewind, when a retry needs the reader again, builds an error.
func TestMarkAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("-race allocates")
	}
	for _, k := range markKinds(t) {
		assert.Zero(t, testing.AllocsPerRun(1000, func() { markSink = breakerimpl.Mark(k.r) }), k.name)
	}
}

// markSink keeps Mark's result alive, so that nothing is optimized away.
var markSink breakerimpl.Reader

// BenchmarkMark is what a call of a method with retries or a chain
// pays for each reader argument before its first try.
func BenchmarkMark(b *testing.B) {
	for _, k := range markKinds(b) {
		b.Run(k.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				markSink = breakerimpl.Mark(k.r)
			}
		})
	}
}
