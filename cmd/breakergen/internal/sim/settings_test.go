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
	got := slices.Sorted(slices.Values(annotation.WindowKeys))
	assert.Equal(t, need, got)
	for _, k := range annotation.WindowKeys {
		assert.Contains(t, Replayed, k)
	}
}

// TestParseCandidateWarnsAsTheGeneratorDoes: a minimum above a count
// window and a slowrate without slow are warnings of the generator's
// (and Registry.Update refuses both); a candidate carries them, in the
// generator's words, so sim prints them rather than replay them
// silently.
func TestParseCandidateWarnsAsTheGeneratorDoes(t *testing.T) {
	c := mustCandidate(t, "tdx:window=100 minimum=500")
	assert.Equal(t, []string{`-set: tdx: warning: minimum=500 of breaker "tdx" is above window=100, which holds at most 100 calls: the rates apply once it holds 100; give minimum=100 or less`}, c.Warnings)
	c = mustCandidate(t, "tdx:window=100 slowrate=50%")
	assert.Equal(t, []string{`-set: tdx: warning: slowrate of breaker "tdx" has no effect without slow=D, the duration past which a call is slow; give slow=D too`}, c.Warnings)
	assert.Empty(t, mustCandidate(t, "tdx:window=100 minimum=50 slow=1s slowrate=50%").Warnings)
}
