package httpguard_test

import (
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
	httpguard.Unshare(get, sh)
	httpguard.Unshare(nil, nil)
}

// TestShareGivesEachSourceItsBody: with GetBody, each racing source reads
// a body of its own, at once; the request's own body, which none read, is
// closed when the race ends.
func TestShareGivesEachSourceItsBody(t *testing.T) {
	post, err := http.NewRequest(http.MethodPost, "http://x/", strings.NewReader("order=1"))
	require.NoError(t, err)
	var closed atomic.Int32
	post.Body = countedBody{post.Body, &closed}
	sh := httpguard.Share(post)
	require.Nil(t, sh)

	var wg sync.WaitGroup
	got := make([]string, 4)
	for i := range got {
		r, err := httpguard.Take(post, sh)
		require.NoError(t, err)
		assert.NotSame(t, post, r)
		wg.Go(func() {
			b, _ := io.ReadAll(r.Body)
			got[i] = string(b)
		})
	}
	wg.Wait()
	assert.Equal(t, []string{"order=1", "order=1", "order=1", "order=1"}, got)
	assert.Zero(t, closed.Load())
	httpguard.Unshare(post, sh)
	assert.Equal(t, int32(1), closed.Load(), "no source sent it")
}

// TestShareOneBody: without GetBody, the first source sends the request
// itself and every other sends nothing; the body is the transport's to
// close once sent, and the race's when no source took it.
func TestShareOneBody(t *testing.T) {
	var closed atomic.Int32
	post, err := http.NewRequest(http.MethodPost, "http://x/", countedBody{strings.NewReader("order=1"), &closed})
	require.NoError(t, err)
	require.Nil(t, post.GetBody, "an unknown reader has no GetBody")
	sh := httpguard.Share(post)
	require.NotNil(t, sh)

	r, err := httpguard.Take(post, sh)
	require.NoError(t, err)
	assert.Same(t, post, r)
	_, err = httpguard.Take(post, sh)
	assert.ErrorIs(t, err, httpguard.ErrUnrewindable)
	httpguard.Unshare(post, sh)
	assert.Zero(t, closed.Load(), "sent: the transport closes it")

	sh = httpguard.Share(post)
	httpguard.Unshare(post, sh)
	assert.Equal(t, int32(1), closed.Load(), "never sent: closed at the race's end")
}
