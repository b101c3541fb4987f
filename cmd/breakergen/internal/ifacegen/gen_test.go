package ifacegen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenerate: every seed yields gofmt-clean source (Generate formats
// it, and fails on anything that does not parse), and the same seed the
// same files.
func TestGenerate(t *testing.T) {
	for seed := range uint64(200) {
		p, err := Generate("example.com/x", seed)
		require.NoError(t, err, "seed %d", seed)
		require.NotEmpty(t, p.Interfaces, "seed %d", seed)
		require.Contains(t, p.Files, p.Dir+"/a.go")
		require.Contains(t, p.Files, p.Dir+"/fz_test.go")
		again, err := Generate("example.com/x", seed)
		require.NoError(t, err)
		assert.Equal(t, p, again, "seed %d", seed)
	}
}

// TestReproduce: asking for the known bugs changes some packages, and
// leaves the interfaces' names alone.
func TestReproduce(t *testing.T) {
	changed := 0
	for seed := range uint64(200) {
		p, err := Generate("example.com/x", seed)
		require.NoError(t, err)
		q, err := Generate("example.com/x", seed, KnownBugs...)
		require.NoError(t, err)
		assert.Equal(t, p.Interfaces, q.Interfaces)
		if !assert.ObjectsAreEqual(p.Files, q.Files) {
			changed++
		}
	}
	assert.Positive(t, changed)
}
