package e2e

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

type nilValued struct{}

func (nilValued) Get(context.Context) (*Price, error) { return nil, nil }

type nilResponses struct{}

func (nilResponses) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// TestValidFuncPanicIsAFailure: a valid func that panics (here on an
// upstream's nil answer) panics inside the try, as the method would: the
// try counts a failure and the panic is re-raised (SPEC §3). It left a
// success counted: three panics, and the breaker CLOSED with no failure.
func TestValidFuncPanicIsAFailure(t *testing.T) {
	reg := newRegistry()
	p := NewValuedBreaker(nilValued{}, reg)
	for range 2 {
		assert.Panics(t, func() { _, _ = p.Get(context.Background()) })
	}
	b, _ := reg.Lookup("vquotes")
	assert.Equal(t, uint64(2), b.Stats().Failures, "each panic of the valid func")
	assert.Equal(t, runtime.Open, b.State(), "threshold=2")

	j := NewJudgedValuedBreaker(nilResponses{}, reg)
	req, err := http.NewRequest(http.MethodGet, "http://x", nil)
	require.NoError(t, err)
	assert.Panics(t, func() { _, _ = j.RoundTrip(req) }, "the valid func reads a nil Request")
	jb, _ := reg.Lookup("judgedquotes")
	assert.Equal(t, uint64(1), jb.Stats().Failures, "the judged method's valid func's panic")
}
