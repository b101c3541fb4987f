package httpguard_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime/httpguard"
)

// countedBody is a request body that counts its closes.
type countedBody struct {
	io.Reader
	closed *atomic.Int32
}

func (b countedBody) Close() error {
	b.closed.Add(1)
	return nil
}

func TestShareWithoutBody(t *testing.T) {
	get, err := http.NewRequest(http.MethodGet, "http://x/", nil)
	require.NoError(t, err)
	sh := httpguard.Share(get)
	assert.Nil(t, sh)
	for range 2 {
		r, err := httpguard.Take(get, sh)
		require.NoError(t, err)
		assert.Same(t, get, r, "every source sends the request itself")
	}
	assert.NoError(t, httpguard.Unsent(get, sh))
	httpguard.Unshare(get, sh)
}

// TestShareGivesEachSourceItsBody: the first source sends the request's
// own body; with GetBody, every other reads a body of its own, at once.
func TestShareGivesEachSourceItsBody(t *testing.T) {
	post, err := http.NewRequest(http.MethodPost, "http://x/", strings.NewReader("order=1"))
	require.NoError(t, err)
	var closed atomic.Int32
	post.Body = countedBody{post.Body, &closed}
	sh := httpguard.Share(post)
	require.NotNil(t, sh)

	var wg sync.WaitGroup
	got := make([]string, 4)
	for i := range got {
		r, err := httpguard.Take(post, sh)
		require.NoError(t, err)
		require.NoError(t, httpguard.Unsent(post, sh), "GetBody sends it again")
		if i == 0 {
			assert.Same(t, post, r, "the first source sends the request itself")
		} else {
			assert.NotSame(t, post, r)
		}
		wg.Go(func() {
			b, _ := io.ReadAll(r.Body)
			got[i] = string(b)
		})
	}
	wg.Wait()
	assert.Equal(t, []string{"order=1", "order=1", "order=1", "order=1"}, got)
	httpguard.Unshare(post, sh)
	assert.Zero(t, closed.Load(), "sent: the first source's transport closes it")

	sh = httpguard.Share(post)
	httpguard.Unshare(post, sh)
	assert.Equal(t, int32(1), closed.Load(), "never sent: closed at the race's end")
}

// TestShareOneBody: without GetBody, the first source sends the request
// itself and every other sends nothing.
func TestShareOneBody(t *testing.T) {
	var closed atomic.Int32
	post, err := http.NewRequest(http.MethodPost, "http://x/", countedBody{strings.NewReader("order=1"), &closed})
	require.NoError(t, err)
	require.Nil(t, post.GetBody, "an unknown reader has no GetBody")
	sh := httpguard.Share(post)
	require.NotNil(t, sh)

	require.NoError(t, httpguard.Unsent(post, sh))
	r, err := httpguard.Take(post, sh)
	require.NoError(t, err)
	assert.Same(t, post, r)
	assert.ErrorIs(t, httpguard.Unsent(post, sh), httpguard.ErrUnrewindable, "asked before a try is admitted")
	_, err = httpguard.Take(post, sh)
	assert.ErrorIs(t, err, httpguard.ErrUnrewindable)
	httpguard.Unshare(post, sh)
	assert.Zero(t, closed.Load(), "sent: the transport closes it")

	sh = httpguard.Share(post)
	httpguard.Unshare(post, sh)
	assert.Equal(t, int32(1), closed.Load(), "never sent: closed at the race's end")
}

// TestShareGetBodyFails: a GetBody that fails sends nothing: Take reports
// it, matching ErrUnrewindable, before the source's request is sent.
func TestShareGetBodyFails(t *testing.T) {
	post, err := http.NewRequest(http.MethodPost, "http://x/", strings.NewReader("order=1"))
	require.NoError(t, err)
	broken := errors.New("no more")
	post.GetBody = func() (io.ReadCloser, error) { return nil, broken }
	sh := httpguard.Share(post)
	_, err = httpguard.Take(post, sh)
	require.NoError(t, err, "the first source sends the body itself")
	_, err = httpguard.Take(post, sh)
	assert.ErrorIs(t, err, httpguard.ErrUnrewindable)
	assert.ErrorIs(t, err, broken)
}
