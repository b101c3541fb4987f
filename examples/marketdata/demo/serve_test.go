package demo

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestServerTimeouts: the demo's server sets every timeout httphealth's
// "Serving" asks for, so that idle and half-sent connections close.
func TestServerTimeouts(t *testing.T) {
	srv := NewServer(http.NotFoundHandler())
	assert.Positive(t, srv.ReadHeaderTimeout)
	assert.Positive(t, srv.ReadTimeout)
	assert.Positive(t, srv.WriteTimeout)
	assert.Positive(t, srv.IdleTimeout)
	assert.Less(t, srv.ReadHeaderTimeout, srv.ReadTimeout)
}
