package annotation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/textwrap"
)

// Key is one annotation key: how it is written, what it means, what it
// belongs to, where it may be written and how its value parses.
type Key struct {
	Name string
	// Arg names the value in the usage text (threshold=N); "" for a flag.
	Arg string
	// Value, Meaning and Default are the columns of the manual's table, in
	// Markdown (code in backquotes); Default is "" where none applies.
	Value, Meaning, Default string
	Scope                   Scope
	// Where lists where the key may be written; nil means anywhere.
	Where []Where
	// parse reads a value into v, or returns a problem; nil for a flag.
	parse func(s string, v *Value) string
}

// Flag reports whether the key is a bare word without a value.
func (k *Key) Flag() bool { return k.parse == nil }

// keys is the one table of annotation keys, in the manual's order. The
// manual (doc.go), the README's table, the did-you-mean hints and the
// usage text (-h) come from it or are checked against it by a test, so a
// new key is one entry here (and its handling in the model).
var keys = []Key{
	{Name: "name", Arg: "a-b.c:d", Value: "`[a-z0-9_.:-]+`", Scope: RoutingScope, parse: parseName,
		Meaning: "registry name of the breaker and limiter; wrappers that name the same breaker share it",
		Default: "the interface's name, lower-cased"},
	{Name: "threshold", Arg: "N", Value: "int >= 1", Scope: NameScope, parse: parseCount,
		Meaning: "consecutive failures that trip CLOSED -> OPEN", Default: "5"},
	{Name: "reset", Arg: "D..MAX", Value: "`D` or `D..MAX`", Scope: NameScope, parse: parseReset,
		Meaning: "how long OPEN lasts before a probe is allowed; with MAX, each failed probe doubles it up to MAX, and a close returns to D; each at most 24h",
		Default: "30s"},
	{Name: "jitter", Arg: "P%", Value: "`0%`..`100%`", Scope: NameScope, parse: parseJitter,
		Meaning: "each OPEN period is drawn uniformly in [d*(1-P), d] from the registry's rand, so a fleet's probes spread out",
		Default: "0%"},
	{Name: "halfopen", Arg: "N", Value: "int >= 1", Scope: NameScope, parse: parseCount,
		Meaning: "concurrent probes admitted in HALF_OPEN", Default: "1"},
	{Name: "successes", Arg: "N", Value: "int >= 1", Scope: NameScope, parse: parseCount,
		Meaning: "consecutive probe successes that close it", Default: "1"},
	{Name: "ratelimit", Arg: "R/B", Value: "`R/B`", Scope: NameScope, parse: parseRate,
		Meaning: "token bucket: R tokens per second (at most 1e9), burst B", Default: "none"},
	{Name: "window", Arg: "N|D", Value: "N >= 10 or D >= 1s", Scope: NameScope, parse: parseWindow,
		Meaning: "trip on rates over the last N calls (at most 1048576) or the last D (ten buckets of D/10); with it, `threshold` applies only when given",
		Default: "none"},
	{Name: "failrate", Arg: "P%", Value: "`1%`..`100%`", Scope: NameScope, parse: parsePercent,
		Meaning: "trip when the window holds `minimum` calls and failures/calls reaches this; needs `window`",
		Default: "50%"},
	{Name: "minimum", Arg: "N", Value: "int >= 1", Scope: NameScope, parse: parseCount,
		Meaning: "calls the window must hold before a rate applies; needs `window`", Default: "20, at most N"},
	{Name: "slow", Arg: "D", Value: "Go duration", Scope: NameScope, parse: parseDuration,
		Meaning: "a call that ends after this long is slow, whatever its outcome; needs `window`", Default: "none"},
	{Name: "slowrate", Arg: "P%", Value: "`1%`..`100%`", Scope: NameScope, parse: parsePercent,
		Meaning: "trip when slow/calls in the window reaches this; needs `window`", Default: "50%"},
	{Name: "inflight", Arg: "D", Value: "Go duration", Scope: NameScope, parse: parseDuration,
		Meaning: "a call still running after this long counts as one failure then; its later outcome is ignored",
		Default: "none"},
	{Name: "concurrency", Arg: "N", Value: "int >= 1", Scope: NameScope, parse: parseCount,
		Meaning: "most calls of the name in flight; one more waits for a slot up to `maxwait` or the ctx deadline, then fails with `ErrBulkheadFull`",
		Default: "none"},
	{Name: "throttle", Arg: "K", Value: "float in 1..1e6", Scope: NameScope, parse: parseThrottle,
		Meaning: "adaptive throttling: with R calls and A accepted in the last 2 minutes, refuse a call with `ErrThrottled` with probability max(0, (R-K*A)/(R+1))",
		Default: "none"},
	{Name: "keys", Arg: "N", Value: "int >= 1", Scope: NameScope, parse: parseCount,
		Meaning: "most per-key breakers of a keyed name live at once; past that the least recently used CLOSED one with no call in flight is dropped; needs `key`",
		Default: "1000"},
	{Name: "maxopen", Arg: "P%", Value: "`1%`..`100%`", Scope: NameScope, parse: parseMaxOpen,
		Meaning: "at most P% of a keyed name's live keys out of CLOSED at once (at least one); a key that would trip past that stays CLOSED; needs `key`",
		Default: "none"},
	{Name: "maxwait", Arg: "D", Value: "Go duration", Scope: LineScope, parse: parseDuration,
		Meaning: "longest a call waits for a token or a slot before `ErrRateLimited` or `ErrBulkheadFull`; needs a `ratelimit` or a `concurrency` for its name",
		Default: "the ctx deadline"},
	{Name: "timeout", Arg: "D", Value: "Go duration", Scope: LineScope, parse: parseDuration,
		Meaning: "per-try deadline added to the method's ctx (a nil ctx is taken as `context.Background()`)", Default: "none"},
	{Name: "exclude", Arg: "E,p.E", Value: "`ErrA,pkg.ErrB`", Scope: LineScope, parse: parseIdents,
		Meaning: "errors (matched with `errors.Is`) that count as success", Default: "none"},
	{Name: "attempts", Arg: "N", Value: "int >= 1", Scope: LineScope, parse: parseCount,
		Meaning: "tries per call, the first included; each goes through the breaker, so attempts at or above `threshold` let one call trip it by itself", Default: "1"},
	{Name: "backoff", Arg: "D..MAX", Value: "`D` or `D..MAX`", Scope: LineScope, parse: parseBackoff,
		Meaning: "wait between tries: fixed, or exponential from D capped at MAX with full jitter", Default: "100ms"},
	{Name: "budget", Arg: "N", Value: "int >= 1", Scope: LineScope, parse: parseCount,
		Meaning: "most upstream tries one call may spend, across retries and fallbacks (also `runtime.WithBudget`)",
		Default: "none"},
	{Name: "valid", Arg: "F", Value: "`F` or `pkg.F`", Scope: LineScope, parse: parseValid,
		Meaning: "`func(results...) bool`; false means \"no data\": neither success nor failure, never kept; `-` on a method's line clears it",
		Default: "none"},
	{Name: "failure", Arg: "F", Value: "`F` or `pkg.F`", Scope: LineScope, parse: parseValid,
		Meaning: "`func(results...) error` judging an answer that came without an error (an HTTP 503); non-nil counts as that failure, a `RetryAfter` in it included, and the answer still reaches the caller; `-` on a method's line clears it",
		Default: "none"},
	{Name: "stale", Arg: "D", Value: "Go duration", Scope: LineScope, parse: parseStale,
		Meaning: "keep the last valid result per arguments this long, for when the call fails; `0` on a method's line clears it",
		Default: "none"},
	{Name: "stalesize", Arg: "N", Value: "int >= 1", Scope: LineScope, parse: parseCount,
		Meaning: "most results kept per method; needs `stale`", Default: "1024"},
	{Name: "key", Arg: "PARAM", Value: "`PARAM` or `host`", Scope: LineScope, parse: parseKey,
		Meaning: "one breaker `<name>/<value>` per value of that parameter (a string or integer kind, or a `fmt.Stringer`); `host` on a method with an `*http.Request` keys by its `URL.Host`; `-` on a method's line clears it",
		Default: "none"},
	{Name: "hedge", Arg: "D", Value: "Go duration", Scope: LineScope, parse: parseDuration,
		Meaning: "in a chain: when the source asked has not answered within D, also ask the next one; the first valid answer wins",
		Default: "none"},
	{Name: "hedges", Arg: "N", Value: "int >= 1", Scope: LineScope, parse: parseCount,
		Meaning: "most extra sources in flight for one call; needs `hedge`", Default: "1"},
	{Name: "methods", Arg: "A,B*", Value: "`Name,Glob*`", Scope: RoutingScope, Where: []Where{OnInterface}, parse: parseGlobs,
		Meaning: "the methods this line routes; the line without `methods` is the default route"},
	{Name: "skip", Value: "flag", Scope: RoutingScope, Where: []Where{OnMethod},
		Meaning: "delegate without any guard"},
	{Name: "chain", Value: "flag", Scope: InterfaceScope, Where: []Where{OnInterface},
		Meaning: "also write the fallback chain `XChain` and `NewXChain`"},
}

// notYet lists the keys that are specified but not built yet: they are
// rejected as "not supported yet". Every key of SPEC sections 2-9 is built.
var notYet []string

// Keys returns the table of supported keys, in the manual's order.
func Keys() []Key { return slices.Clone(keys) }

// NotYet returns the keys that are reserved but not supported yet.
func NotYet() []string { return slices.Clone(notYet) }

// lookupKey returns the supported key called name, or nil.
func lookupKey(name string) *Key {
	for i := range keys {
		if keys[i].Name == name {
			return &keys[i]
		}
	}
	return nil
}

// DefaultOf returns the value a key has when it is not given, as its
// Default column says it, and whether that is a value of the key (not
// "none", nor a rule such as minimum's).
func DefaultOf(name string) (Value, bool) {
	k := lookupKey(name)
	if k == nil || k.parse == nil || k.Default == "" {
		return Value{}, false
	}
	var v Value
	if k.parse(k.Default, &v) != "" {
		return Value{}, false
	}
	return v, true
}

// KeyScope returns the scope of a supported key.
func KeyScope(name string) Scope {
	if k := lookupKey(name); k != nil {
		return k.Scope
	}
	return -1
}

// NameKeys lists the keys of [NameScope], sorted.
func NameKeys() []string { return sortedKeys(NameScope) }

// LineKeys lists the keys of [LineScope], sorted.
func LineKeys() []string { return sortedKeys(LineScope) }

func sortedKeys(s Scope) []string {
	var out []string
	for _, k := range keys {
		if k.Scope == s {
			out = append(out, k.Name)
		}
	}
	slices.Sort(out)
	return out
}

// meaning is k's meaning with where it may be written in front.
func (k *Key) meaning() string {
	switch {
	case slices.Equal(k.Where, []Where{OnInterface}):
		return "on an interface line: " + k.Meaning
	case slices.Equal(k.Where, []Where{OnMethod}):
		return "on a method's line: " + k.Meaning
	}
	return k.Meaning
}

// plain drops the backquotes of the table's Markdown.
func plain(s string) string { return strings.ReplaceAll(s, "`", "") }

// MarkdownTable renders the table for the README.
func MarkdownTable() string {
	var sb strings.Builder
	sb.WriteString("| key | value | meaning | default |\n| --- | --- | --- | --- |\n")
	for _, k := range keys {
		row := fmt.Sprintf("| `%s` | %s | %s | %s |", k.Name, k.Value, k.meaning(), k.Default)
		sb.WriteString(strings.Replace(row, "|  |", "| |", 1) + "\n")
	}
	return sb.String()
}

// ManualTable renders the table for the command's manual (doc.go), as
// lines of text without the comment markers: columns key, value, meaning
// (wrapped) and default.
func ManualTable() []string {
	kw, vw := len("key"), len("value")
	for _, k := range keys {
		kw = max(kw, len(k.Name))
		vw = max(vw, len(plain(k.Value)))
	}
	const mw = 46
	row := func(k, v, m, d string) string {
		return strings.TrimRight(fmt.Sprintf("%-*s  %-*s  %-*s  %s", kw, k, vw, v, mw, m, d), " ")
	}
	out := []string{row("key", "value", "meaning", "default")}
	for _, k := range keys {
		d := plain(k.Default)
		if d == "" {
			d = "-"
		}
		for i, m := range textwrap.Lines(plain(k.meaning()), mw) {
			if i == 0 {
				out = append(out, row(k.Name, plain(k.Value), m, d))
			} else {
				out = append(out, row("", "", m, ""))
			}
		}
	}
	return out
}

// UsageTable renders the table for the usage text (-h): key=ARG, then the
// meaning, the default and, for the keys of a name, "per name", wrapped
// to 80 columns and indented by four spaces.
func UsageTable() string {
	const indent, col = "    ", 19
	var sb strings.Builder
	for _, k := range keys {
		head := k.Name
		if !k.Flag() {
			head += "=" + k.Arg
		}
		text := plain(k.meaning())
		if k.Default != "" {
			text += "; default " + plain(k.Default)
		}
		if k.Scope == NameScope {
			text += "; per name"
		}
		lines := textwrap.Lines(text, 80-col)
		first := indent + head
		if len(first) >= col {
			sb.WriteString(first + "\n")
			first = ""
		}
		for i, l := range lines {
			if i == 0 && first != "" {
				fmt.Fprintf(&sb, "%-*s%s\n", col, first, l)
				continue
			}
			fmt.Fprintf(&sb, "%*s%s\n", col, "", l)
		}
	}
	return sb.String()
}
