package sim

import (
	"bufio"
	"fmt"
	"go/token"
	"io"
	"slices"
	"strings"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
	"github.com/breakergen/breakergen/runtime"
)

// Candidate is one setting to replay: a breaker's name and the keys given
// for it, in the annotation grammar.
type Candidate struct {
	Name   string // the breaker whose calls it replays
	Keys   string // the keys as written, for the report
	Config runtime.Config
	// Warnings are what the generator would warn of in these keys, as
	// annotations of one name (a minimum above a count window, a
	// slowrate without slow): "WHERE: NAME: warning: ...".
	Warnings []string
}

// Replayed are the keys a candidate may give: those that decide when a
// breaker trips and for how long it stays OPEN. Load control and rate
// limits wait for slots and tokens, which a replay on one goroutine
// cannot do.
var Replayed = []string{"threshold", "reset", "jitter", "halfopen", "successes",
	"window", "failrate", "minimum", "slow", "slowrate", "inflight"}

// ParseCandidate parses "NAME:key=value ..." (-set); where names the text's
// origin in errors ("-set" or "FILE:LINE"). The keys that need another
// key are checked as the generator checks a name's annotations: a key
// that needs a window (failrate, minimum, slow, slowrate) in a candidate
// without one is an error, and the generator's warnings (a minimum above
// a count window, a slowrate without slow) are the candidate's Warnings,
// in the generator's words.
func ParseCandidate(text, where string) (Candidate, error) {
	name, keys, ok := splitCandidate(text)
	if !ok || name == "" {
		return Candidate{}, fmt.Errorf("%s: want NAME:key=value ..., like 'tdx:window=100 failrate=50%%', got %q", where, text)
	}
	line, errs := annotation.Parse(annotation.Prefix+keys, token.Position{Filename: where, Line: 1, Column: 1}, annotation.OnInterface)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Msg
		}
		return Candidate{}, fmt.Errorf("%s: %s: %s", where, name, strings.Join(msgs, "; "))
	}
	c := Candidate{Name: name, Keys: keys, Config: runtime.Config{Name: name}}
	cfg := &c.Config
	for _, o := range line.Options {
		if !slices.Contains(Replayed, o.Key) {
			return Candidate{}, fmt.Errorf("%s: %s: %s is not replayed; sim replays %s", where, name, o.Key, strings.Join(Replayed, ", "))
		}
		v := o.Value
		switch o.Key {
		case "threshold":
			cfg.FailureThreshold = v.Count
		case "reset":
			cfg.ResetTimeout, cfg.ResetMax = v.Duration, v.Backoff.Max
		case "jitter":
			cfg.ResetJitter = v.Number
		case "halfopen":
			cfg.HalfOpenMax = v.Count
		case "successes":
			cfg.SuccessThreshold = v.Count
		case "window":
			cfg.WindowCalls, cfg.WindowPeriod = v.Count, v.Duration
		case "failrate":
			cfg.FailureRate = v.Number
		case "minimum":
			cfg.MinimumCalls = v.Count
		case "slow":
			cfg.SlowCall = v.Duration
		case "slowrate":
			cfg.SlowRate = v.Number
		case "inflight":
			cfg.InFlight = v.Duration
		}
	}
	// The keys that need another key of the name, checked as the
	// generator checks a name's annotations (annotation.CheckWindowKeys):
	// a key that needs a window without one is an error (the runtime
	// would drop it, and the replay would be of the defaults under the
	// label of the keys); the generator's warnings are the candidate's.
	given := map[string]annotation.Option{}
	for _, o := range line.Options {
		if _, ok := given[o.Key]; !ok {
			given[o.Key] = o
		}
	}
	errs, warnings := annotation.CheckWindowKeys(name, given, nil)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Msg
		}
		return Candidate{}, fmt.Errorf("%s: %s: %s", where, name, strings.Join(msgs, "; "))
	}
	for _, w := range warnings {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s: %s", where, name, w.Msg))
	}
	return c, nil
}

// ReadCandidates reads a -sets file: one candidate a line, as for -set;
// blank lines and lines starting with # are skipped.
func ReadCandidates(r io.Reader, file string) ([]Candidate, error) {
	sc := bufio.NewScanner(r)
	var out []Candidate
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, err := ParseCandidate(line, fmt.Sprintf("%s:%d", file, n))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// splitCandidate splits "NAME:keys" at the last colon followed by nothing
// or by a key=value, so that a name may hold colons (fallback:sina:reset=5s).
func splitCandidate(text string) (name, keys string, ok bool) {
	for i := len(text) - 1; i >= 0; i-- {
		if text[i] != ':' {
			continue
		}
		tail := strings.Fields(text[i+1:])
		if len(tail) == 0 || strings.Contains(tail[0], "=") {
			return strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+1:]), true
		}
	}
	return "", "", false
}
