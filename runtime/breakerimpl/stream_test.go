package breakerimpl_test

import (
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

type closeCounter struct{ n int }

func (c *closeCounter) Close() error { c.n++; return nil }

type panicCloser struct{}

func (panicCloser) Close() error { panic("closed twice") }

// TestCloseStream: a stream is closed once; nil, a typed nil (a failed
// gzip.NewReader's) and a Close that panics do not panic.
func TestCloseStream(t *testing.T) {
	c := &closeCounter{}
	breakerimpl.CloseStream(c)
	assert.Equal(t, 1, c.n)

	_, err := gzip.NewReader(strings.NewReader("not gzip"))
	assert.Error(t, err)
	var typedNil io.ReadCloser = (*gzip.Reader)(nil)
	assert.NotPanics(t, func() { breakerimpl.CloseStream(typedNil) })
	assert.NotPanics(t, func() { breakerimpl.CloseStream(nil) })
	assert.NotPanics(t, func() { breakerimpl.CloseStream(panicCloser{}) })
}
