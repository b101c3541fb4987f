package ratelimit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	r, b, err := Parse("1.5/3")
	require.NoError(t, err)
	assert.Equal(t, 1.5, r)
	assert.Equal(t, 3, b)
	r, b, err = Parse(" 1e9/1 ")
	require.NoError(t, err)
	assert.Equal(t, 1e9, r)
	assert.Equal(t, 1, b)
	for _, bad := range []string{"", "1.5", "0/3", "-1/3", "x/3", "1/0", "1/x", "NaN/2", "Inf/1", "2e9/1", "1/1.5", "/"} {
		_, _, err := Parse(bad)
		assert.Error(t, err, bad)
	}
}
