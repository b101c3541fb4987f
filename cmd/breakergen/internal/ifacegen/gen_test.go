package ifacegen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenerate: every seed yields gofmt-clean source (Generate formats
// it, and fails on anything that does not parse), and the same seed the
// same files.
func TestGenerate(t *testing.T) {
	for seed := range uint64(50) {
		p, err := Generate("example.com/x", seed, Options{})
		require.NoError(t, err, "seed %d", seed)
		require.NotEmpty(t, p.Interfaces, "seed %d", seed)
		require.Contains(t, p.Files, p.Dir+"/a.go")
		require.Contains(t, p.Files, p.Dir+"/fz_test.go")
		again, err := Generate("example.com/x", seed, Options{})
		require.NoError(t, err)
		assert.Equal(t, p, again, "seed %d", seed)
	}
}

// TestReproduce: asking for the known bugs changes some packages, and
// leaves the interfaces' names alone.
func TestReproduce(t *testing.T) {
	changed := 0
	for seed := range uint64(50) {
		p, err := Generate("example.com/x", seed, Options{})
		require.NoError(t, err)
		q, err := Generate("example.com/x", seed, Options{Reproduce: KnownBugs})
		require.NoError(t, err)
		assert.Equal(t, p.Interfaces, q.Interfaces)
		if !assert.ObjectsAreEqual(p.Files, q.Files) {
			changed++
		}
	}
	assert.Positive(t, changed)
}

// TestChainFlag: with the chain flag, some interfaces carry it, and only
// their tests call a chain.
func TestChainFlag(t *testing.T) {
	flagged := 0
	for seed := range uint64(50) {
		p, err := Generate("example.com/x", seed, Options{Chains: ChainsFlag})
		require.NoError(t, err)
		src := string(p.Files[p.Dir+"/fz_test.go"])
		for _, data := range p.Files {
			flagged += strings.Count(string(data), " chain\n") + strings.Count(string(data), " chain ")
		}
		chains := strings.Count(src, "Chain(rec, fzRegistry())") + strings.Count(src, "Chain[")
		if chains > 0 {
			assert.Positive(t, flagged, "seed %d", seed)
		}
	}
	assert.Positive(t, flagged)
}
