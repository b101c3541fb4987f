package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
)

// TestParseCandidateWindowKeysNeedAWindow: failrate, minimum, slow and
// slowrate without a window in the same candidate are errors (SPEC §8),
// in the generator's words and all at once, instead of a replay of the
// defaults under their label.
func TestParseCandidateWindowKeysNeedAWindow(t *testing.T) {
	const tail = " has no window to apply it to; give window=N (calls) or window=D (a duration) for it too"
	for in, want := range map[string]string{
		"up:failrate=50%": `-set: up: failrate: breaker "up"` + tail,
		"up:minimum=3":    `-set: up: minimum: breaker "up"` + tail,
		"up:slow=1ms":     `-set: up: slow: breaker "up"` + tail,
		"up:slowrate=40%": `-set: up: slowrate: breaker "up"` + tail,
		"a:b:threshold=3 failrate=50% slow=2s": `-set: a:b: failrate: breaker "a:b"` + tail +
			`; slow: breaker "a:b"` + tail,
	} {
		_, err := ParseCandidate(in, "-set")
		if assert.Error(t, err, in) {
			assert.Equal(t, want, err.Error(), in)
		}
	}

	c := mustCandidate(t, "up:window=20 failrate=50% minimum=3 slow=1ms slowrate=40%")
	assert.Equal(t, 20, c.Config.WindowCalls)
	assert.Equal(t, 3, c.Config.MinimumCalls)
	c = mustCandidate(t, "up:window=1m slow=1s")
	assert.Positive(t, c.Config.WindowPeriod)
	mustCandidate(t, "up:threshold=3 inflight=30s") // inflight works without a window

	_, err := ReadCandidates(strings.NewReader("up:window=20 failrate=50%\nup:failrate=50%\n"), "sets.txt")
	assert.EqualError(t, err, `sets.txt:2: up: failrate: breaker "up"`+tail)
}

// TestWindowKeysAreTheKeyTables: the keys checked are the replayed keys
// that the annotation key table says need a window, so that a key added
// there is checked here too.
func TestWindowKeysAreTheKeyTables(t *testing.T) {
	var need []string
	for _, k := range annotation.Keys() {
		if strings.Contains(k.Meaning, "needs `window`") {
			need = append(need, k.Name)
		}
	}
	require.NotEmpty(t, need)
	slices.Sort(need)
	got := slices.Sorted(slices.Values(windowKeys))
	assert.Equal(t, need, got)
	for _, k := range windowKeys {
		assert.Contains(t, Replayed, k)
	}
}
