package httpguard_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

func TestRewind(t *testing.T) {
	get, err := http.NewRequest(http.MethodGet, "http://x/", nil)
	require.NoError(t, err)
	again, err := httpguard.Rewind(get)
	require.NoError(t, err)
	assert.Same(t, get, again, "no body: the request itself")

	noBody, err := http.NewRequest(http.MethodPost, "http://x/", http.NoBody)
	require.NoError(t, err)
	again, err = httpguard.Rewind(noBody)
	require.NoError(t, err)
	assert.Same(t, noBody, again)

	post, err := http.NewRequest(http.MethodPost, "http://x/", strings.NewReader("order=1"))
	require.NoError(t, err)
	_, _ = io.ReadAll(post.Body) // the first try read it
	opened, closed := 0, 0
	orig := post.GetBody
	post.GetBody = func() (io.ReadCloser, error) {
		opened++
		rc, err := orig()
		return closeCount{rc, &closed}, err
	}
	again, err = httpguard.Rewind(post)
	require.NoError(t, err)
	require.NotSame(t, post, again, "a copy")
	assert.Zero(t, opened, "not read yet: nothing opened")
	body, err := io.ReadAll(again.Body)
	require.NoError(t, err)
	assert.Equal(t, "order=1", string(body), "read again, whole")
	assert.Equal(t, post.URL, again.URL)
	require.NoError(t, again.Body.Close())
	assert.Equal(t, 1, opened)
	assert.Equal(t, 1, closed)

	// A copy never sent (its try refused) opens nothing, closed or not.
	unsent, err := httpguard.Rewind(post)
	require.NoError(t, err)
	require.NoError(t, unsent.Body.Close())
	_, err = unsent.Body.Read(make([]byte, 1))
	assert.ErrorIs(t, err, http.ErrBodyReadAfterClose)
	_, err = httpguard.Rewind(post)
	require.NoError(t, err)
	assert.Equal(t, 1, opened, "only the copy that was read opened a body")

	post.GetBody = nil
	again, err = httpguard.Rewind(post)
	assert.ErrorIs(t, err, httpguard.ErrUnrewindable)
	assert.Same(t, post, again)

	// GetBody's error is the error of the copy's first read.
	broken := errors.New("gone")
	post.GetBody = func() (io.ReadCloser, error) { return nil, broken }
	again, err = httpguard.Rewind(post)
	require.NoError(t, err)
	_, err = again.Body.Read(make([]byte, 1))
	assert.ErrorIs(t, err, httpguard.ErrUnrewindable)
	assert.ErrorIs(t, err, broken)

	again, err = httpguard.Rewind(nil)
	assert.NoError(t, err)
	assert.Nil(t, again)
}

type closeCount struct {
	io.ReadCloser
	n *int
}

func (c closeCount) Close() error {
	*c.n++
	return c.ReadCloser.Close()
}
