package annotation

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/internal/ratelimit"
)

// TestKeysTable: every entry of the table is complete and consistent, so
// that the manual, the README and -h rendered from it say something for
// every key.
func TestKeysTable(t *testing.T) {
	word := regexp.MustCompile(`^[a-z]+$`)
	seen := map[string]bool{}
	for _, k := range Keys() {
		t.Run(k.Name, func(t *testing.T) {
			assert.Regexp(t, word, k.Name)
			assert.False(t, seen[k.Name], "listed twice")
			seen[k.Name] = true
			assert.NotContains(t, notYet, k.Name, "both supported and not supported yet")
			assert.NotEmpty(t, k.Meaning)
			assert.NotEmpty(t, k.Value)
			assert.Equal(t, k.Flag(), k.Arg == "", "a flag has no Arg, a key with a value has one")
			assert.Equal(t, k.Flag(), k.Value == "flag")
			assert.Equal(t, strings.Count(k.Meaning, "`")%2, 0, "unbalanced backquotes")
		})
	}
	for _, k := range notYet {
		assert.Regexp(t, word, k)
	}
}

func TestKeyScopes(t *testing.T) {
	assert.Equal(t, []string{"concurrency", "failrate", "halfopen", "inflight", "jitter", "keys", "maxopen", "minimum", "ratelimit", "reset",
		"slow", "slowrate", "successes", "threshold", "throttle", "window"}, NameKeys())
	assert.Equal(t, []string{"attempts", "backoff", "budget", "exclude", "failure", "hedge", "hedges", "key", "maxwait", "stale", "stalesize", "timeout", "valid"}, LineKeys())
	assert.Equal(t, InterfaceScope, KeyScope("chain"))
	assert.Equal(t, Scope(-1), KeyScope("colour"))
}

// TestRenderedTables: each rendering names every key once, in the table's
// order, and keeps to its width.
func TestRenderedTables(t *testing.T) {
	var names []string
	for _, k := range Keys() {
		names = append(names, k.Name)
	}
	md := strings.Split(strings.TrimSuffix(MarkdownTable(), "\n"), "\n")
	require.Len(t, md, len(names)+2)
	for i, l := range md[2:] {
		assert.True(t, strings.HasPrefix(l, "| `"+names[i]+"` | "), l)
	}
	var manual []string
	for _, l := range ManualTable()[1:] {
		if f := strings.Fields(l); l[0] != ' ' {
			manual = append(manual, f[0])
		}
	}
	assert.Equal(t, names, manual)
	var usage []string
	for _, l := range strings.Split(strings.TrimSuffix(UsageTable(), "\n"), "\n") {
		assert.LessOrEqual(t, len(l), 80, l)
		if strings.HasPrefix(l, "    ") && l[4] != ' ' {
			name, _, _ := strings.Cut(strings.Fields(l)[0], "=")
			usage = append(usage, name)
		}
	}
	assert.Equal(t, names, usage)
	assert.True(t, slices.IsSorted(knownKeys()))
}

// TestParseRateIsTheRuntimes: ratelimit reads R/B with the runtime's
// parser (internal/ratelimit), so an annotation accepts what
// BREAKER_<NAME>_RATELIMIT accepts.
func TestParseRateIsTheRuntimes(t *testing.T) {
	for _, s := range []string{"1.5/3", "1e9/1", "2e9/1", "0.001/1", "1/0", "-1/2", "Inf/1", "1/1.5", "1", "/"} {
		var v Value
		problem := parseRate(s, &v)
		_, _, err := ratelimit.Parse(s)
		assert.Equal(t, err == nil, problem == "", s)
	}
}

func TestDefaultOf(t *testing.T) {
	v, ok := DefaultOf("threshold")
	require.True(t, ok)
	assert.Equal(t, 5, v.Count)
	v, ok = DefaultOf("reset")
	require.True(t, ok)
	assert.Equal(t, 30*time.Second, v.Duration)
	for _, k := range []string{"ratelimit", "window", "minimum", "name", "chain", "nope"} {
		_, ok := DefaultOf(k)
		assert.False(t, ok, k)
	}
}
