package runtime

import (
	"strings"
	"testing"
)

// TestEnvOfIsEnvName: envOf finds a name's variables where envName's
// spelling of it does, for names of every kind.
func TestEnvOfIsEnvName(t *testing.T) {
	names := []string{"quote/600519.SH", "a-b:c.d/x", "Quote/Mixed", "ключ/é", "quote/ß", strings.Repeat("k", 64), strings.Repeat("k", 65), "", "quote/"}
	r := &Registry{env: map[string]override{}}
	for i, n := range names {
		r.env[envName(n)] = override{cfg: Config{FailureThreshold: i + 1}}
	}
	for i, n := range names {
		if got := r.envOf(n).cfg.FailureThreshold; got != i+1 {
			t.Errorf("envOf(%q): threshold %d, want %d (envName %q)", n, got, i+1, envName(n))
		}
	}
}

// TestEnvOfAllocs: envOf allocates nothing for a short ASCII name, the
// name of a family's key as its breaker is made.
func TestEnvOfAllocs(t *testing.T) {
	if underRace {
		t.Skip("allocation counts are not meaningful under -race: make allocs runs this test without it")
	}
	r := &Registry{env: map[string]override{envName("quote/600519.SH"): {}}}
	if n := testing.AllocsPerRun(100, func() { _ = r.envOf("quote/600519.sh") }); n != 0 {
		t.Errorf("envOf allocates %v times", n)
	}
}
