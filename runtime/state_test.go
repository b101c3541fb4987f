package runtime_test

import (
	"testing"

	"github.com/breakergen/breakergen/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStateStrings(t *testing.T) {
	assert.Equal(t, "CLOSED", runtime.Closed.String())
	assert.Equal(t, "HALF_OPEN", runtime.HalfOpen.String())
	assert.Equal(t, "OPEN", runtime.Open.String())
	assert.Equal(t, "ISOLATED", runtime.Isolated.String())
	assert.Equal(t, "BYPASSED", runtime.Bypassed.String())
	assert.Equal(t, "State(7)", runtime.State(7).String())
	for _, s := range []runtime.State{runtime.Closed, runtime.HalfOpen, runtime.Open, runtime.Isolated, runtime.Bypassed} {
		txt, err := s.MarshalText()
		require.NoError(t, err)
		var back runtime.State
		require.NoError(t, back.UnmarshalText(txt))
		assert.Equal(t, s, back)
	}
	_, err := runtime.State(7).MarshalText()
	assert.Error(t, err)
	var s runtime.State
	assert.Error(t, s.UnmarshalText([]byte("AJAR")))
}

// TestModeLevels: SPEC §14's health levels of the operator's modes.
func TestModeLevels(t *testing.T) {
	assert.Equal(t, runtime.LevelDown, runtime.Isolated.Level())
	assert.Equal(t, runtime.LevelDegraded, runtime.Bypassed.Level())
}
