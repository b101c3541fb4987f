package annotation

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func pos(col int) token.Position {
	return token.Position{Filename: "a.go", Line: 3, Column: col, Offset: 100 + col - 1}
}

func TestParse(t *testing.T) {
	l, errs := Parse("//breaker:name=eastmoney threshold=5 reset=30s ratelimit=1.5/3 methods=Stock*,Quote exclude=ErrNotFound,io.EOF", pos(1), OnInterface)
	require.Empty(t, errs)
	want := []Option{
		{Key: "name", Raw: "eastmoney", Value: Value{Name: "eastmoney"}, Pos: pos(11)},
		{Key: "threshold", Raw: "5", Value: Value{Count: 5}, Pos: pos(26)},
		{Key: "reset", Raw: "30s", Value: Value{Duration: 30 * time.Second}, Pos: pos(38)},
		{Key: "ratelimit", Raw: "1.5/3", Value: Value{Rate: Rate{Per: 1.5, Burst: 3}}, Pos: pos(48)},
		{Key: "methods", Raw: "Stock*,Quote", Value: Value{List: []string{"Stock*", "Quote"}}, Pos: pos(64)},
		{Key: "exclude", Raw: "ErrNotFound,io.EOF", Value: Value{List: []string{"ErrNotFound", "io.EOF"}}, Pos: pos(85)},
	}
	assert.Equal(t, want, l.Options)
	o, ok := l.Get("exclude")
	require.True(t, ok)
	assert.Equal(t, 85+len("exclude=")+len("ErrNotFound,"), o.ItemPos(1).Column)
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		line  string
		where Where
		want  string // the first error, with its column
	}{
		{"//breaker:treshold=3", OnInterface, `11: unknown key "treshold"; did you mean "threshold"?`},
		{"//breaker:Name=x", OnInterface, `11: unknown key "Name"; did you mean "name"?`},
		{"//breaker:fault=0.3", OnInterface, `11: fault: a setting only, never an annotation (nobody should commit chaos into code): use runtime.Config.Fault, WithConfig or BREAKER_<NAME>_FAULT; see docs/rehearse.md`},
		{"//breaker:threshold=3 latency=1s@0.5", OnMethod, `23: latency: a setting only, never an annotation (nobody should commit chaos into code): use runtime.Config.Latency, WithConfig or BREAKER_<NAME>_LATENCY; see docs/rehearse.md`},
		{"//breaker:threshold=0", OnInterface, `11: threshold: "0" is not an integer >= 1`},
		{"//breaker:threshold", OnInterface, `11: threshold: missing value (write threshold=...)`},
		{"//breaker:reset=5", OnInterface, `11: reset: "5" is not a positive Go duration (like 500ms, 30s, 2m): a duration needs its unit; did you mean 5s?`},
		// A bare number of 100 or more is most often milliseconds (a
		// timeout of 500 was offered 500s, over 8 minutes); words and
		// capitals of units, a trailing number and days get the Go
		// duration they most likely meant (they got no hint).
		{"//breaker:timeout=500", OnInterface, `11: timeout: "500" is not a positive Go duration (like 500ms, 30s, 2m): a duration needs its unit; did you mean 500ms or 500s?`},
		{"//breaker:reset=30sec", OnInterface, `11: reset: "30sec" is not a positive Go duration (like 500ms, 30s, 2m); did you mean 30s?`},
		{"//breaker:reset=30S", OnInterface, `11: reset: "30S" is not a positive Go duration (like 500ms, 30s, 2m); did you mean 30s?`},
		{"//breaker:reset=2Minutes", OnInterface, `11: reset: "2Minutes" is not a positive Go duration (like 500ms, 30s, 2m); did you mean 2m?`},
		{"//breaker:reset=1m30", OnInterface, `11: reset: "1m30" is not a positive Go duration (like 500ms, 30s, 2m); did you mean 1m30s?`},
		{"//breaker:stale=1d", OnInterface, `11: stale: "1d" is not a positive Go duration (like 500ms, 30s, 2m); did you mean 24h?`},
		{"//breaker:maxwait=200msec", OnInterface, `11: maxwait: "200msec" is not a positive Go duration (like 500ms, 30s, 2m); did you mean 200ms?`},
		{"//breaker:timeout=soon", OnInterface, `11: timeout: "soon" is not a positive Go duration (like 500ms, 30s, 2m)`},
		// No hint that is no duration either (1e3ms), nor a guess at M.
		{"//breaker:timeout=1e3", OnInterface, `11: timeout: "1e3" is not a positive Go duration (like 500ms, 30s, 2m)`},
		{"//breaker:timeout=Inf", OnInterface, `11: timeout: "Inf" is not a positive Go duration (like 500ms, 30s, 2m)`},
		{"//breaker:timeout=500M", OnInterface, `11: timeout: "500M" is not a positive Go duration (like 500ms, 30s, 2m)`},
		{"//breaker:stale=2days", OnInterface, `11: stale: "2days" is not a positive Go duration (like 500ms, 30s, 2m); did you mean 48h?`},
		{"//breaker:stale=1.5d", OnInterface, `11: stale: "1.5d" is not a positive Go duration (like 500ms, 30s, 2m); did you mean 36h?`},
		{"//breaker:ratelimit=0/1", OnInterface, `11: ratelimit: "0/1" is not R/B (tokens per second > 0, burst >= 1), like 1.5/3`},
		{"//breaker:ratelimit=NaN/1", OnInterface, `11: ratelimit: "NaN/1" is not R/B (tokens per second > 0, burst >= 1), like 1.5/3`},
		{"//breaker:name=A", OnInterface, `11: name: "A" is not a valid name (lower-case letters, digits and _ . : -)`},
		{"//breaker:name=a  name=b", OnInterface, `19: name: duplicate key (first given at column 11)`},
		{"//breaker:skip", OnInterface, `11: skip: only allowed on a method's line, not on the interface`},
		{"//breaker:skip name=a", OnMethod, `11: skip: must be alone on its line`},
		{"//breaker:skip=true", OnMethod, `11: skip: is a flag and takes no value`},
		{"//breaker:methods=A", OnMethod, `11: methods: only allowed on the interface's lines, not on a method`},
		{"//breaker:threshold=2 chain", OnMethod, `23: chain: only allowed on the interface's lines, not on a method`},
		{"//breaker:chain=true", OnInterface, `11: chain: is a flag and takes no value`},
		{"//breaker:methods=a,,b", OnInterface, `11: methods: "a,,b" has an empty method pattern`},
		{"//breaker:methods=Get,Put,Get", OnInterface, `11: methods: "Get,Put,Get" names Get twice`},
		{"//breaker:exclude=io.EOF,ErrX,io.EOF", OnInterface, `11: exclude: "io.EOF,ErrX,io.EOF" names io.EOF twice`},
		{"//breaker:exclude=io.EOF.x", OnInterface, `11: exclude: "io.EOF.x" is not an error identifier (like ErrNotFound or io.EOF)`},
		{"//breaker:attempts=0", OnMethod, `11: attempts: "0" is not an integer >= 1`},
		{"//breaker:budget=x", OnInterface, `11: budget: "x" is not an integer >= 1`},
		{"//breaker:backoff=0s", OnInterface, `11: backoff: "0s" is not D or D..MAX with positive Go durations, like 100ms or 100ms..2s`},
		{"//breaker:backoff=1s..", OnInterface, `11: backoff: "1s.." is not D or D..MAX with positive Go durations, like 100ms or 100ms..2s`},
		{"//breaker:backoff=2s..1s", OnInterface, `11: backoff: "2s..1s": the cap 1s is below the first wait 2s`},
		{"//breaker:valid=ok()", OnInterface, `11: valid: "ok()" is not a func identifier (a func of the package, like check, or of a package the file imports, like pkg.Check), or - for none`},
		{"//breaker:stale=-1h", OnInterface, `11: stale: "-1h" is not a positive Go duration (like 500ms, 30s, 2m)`},
		{"//breaker:stalesize=0", OnMethod, `11: stalesize: "0" is not an integer >= 1`},
		{"//breaker:window=9", OnInterface, `11: window: "9" is not a window: want a number of calls >= 10 or a Go duration >= 1s, like 100 or 1m`},
		{"//breaker:window=1048577", OnInterface, `11: window: "1048577" is above the largest count window, 1048576 calls, which the runtime would use instead; for a longer memory give a time window, like 10m`},
		{"//breaker:window=500ms", OnInterface, `11: window: "500ms" is not a window: want a number of calls >= 10 or a Go duration >= 1s, like 100 or 1m`},
		{"//breaker:failrate=0.5", OnInterface, `11: failrate: "0.5" is not a percentage from 1% to 100%, like 50%`},
		{"//breaker:failrate=150%", OnInterface, `11: failrate: "150%" is not a percentage from 1% to 100%, like 50%`},
		{"//breaker:slowrate=0%", OnInterface, `11: slowrate: "0%" is not a percentage from 1% to 100%, like 50%`},
		{"//breaker:minimum=0", OnInterface, `11: minimum: "0" is not an integer >= 1`},
		{"//breaker:slow=0s", OnInterface, `11: slow: "0s" is not a positive Go duration (like 500ms, 30s, 2m)`},
		{"//breaker:inflight=3", OnInterface, `11: inflight: "3" is not a positive Go duration (like 500ms, 30s, 2m): a duration needs its unit; did you mean 3s?`},
		{"//breaker:concurrency=-1", OnInterface, `11: concurrency: "-1" is not an integer >= 1`},
		{"//breaker:throttle=0.5", OnInterface, `11: throttle: "0.5" is not a number >= 1, like 2 or 1.5`},
		{"//breaker:ratelimit=2e9/1", OnInterface, `11: ratelimit: "2e9/1": rate 2e9 is above the largest rate, 1e9 tokens per second`},
		{"//breaker:ratelimit=1/99999999999999999999", OnInterface, `11: ratelimit: "1/99999999999999999999": burst 99999999999999999999 is above the largest integer, 9223372036854775807`},
		{"//breaker:throttle=2000000", OnInterface, `11: throttle: "2000000" is above the largest K, 1e6`},
		{"//breaker:halfopen=99999999999999999999", OnInterface, `11: halfopen: "99999999999999999999" is above the largest integer, 9223372036854775807`},
		{"//breaker:window=99999999999999999999", OnInterface, `11: window: "99999999999999999999" is above the largest count window, 1048576 calls, which the runtime would use instead; for a longer memory give a time window, like 10m`},
		{"//breaker:reset=9999999h", OnInterface, `11: reset: "9999999h" is above the longest Go duration, 2562047h47m16.854775807s`},
		{"//breaker:reset=25h", OnInterface, `11: reset: "25h" is more than 24h0m0s, the longest OPEN period`},
		{"//breaker:reset=1m..48h", OnInterface, `11: reset: "1m..48h": the cap 48h0m0s is more than 24h0m0s, the longest OPEN period`},
		{"//breaker:windw=100", OnInterface, `11: unknown key "windw"; did you mean "window"?`},
		{"//breaker:hedge=soon", OnInterface, `11: hedge: "soon" is not a positive Go duration (like 500ms, 30s, 2m)`},
		{"//breaker:key=a.b", OnInterface, `11: key: "a.b" is not a parameter name (like code, or host for an *http.Request's URL.Host), or - for none`},
		{"//breaker:key=_", OnMethod, `11: key: "_" is not a parameter name (like code, or host for an *http.Request's URL.Host), or - for none`},
		{"//breaker:key", OnMethod, `11: key: missing value (write key=...)`},
		{"//breaker:keys=0", OnInterface, `11: keys: "0" is not an integer >= 1`},
		{"//breaker:maxopen=0%", OnInterface, `11: maxopen: "0%" is not a whole percentage from 1% to 100%, like 20%`},
		{"//breaker:maxopen=12.5%", OnInterface, `11: maxopen: "12.5%" is not a whole percentage from 1% to 100%, like 20%`},
		{"//breaker:maxopen=20", OnInterface, `11: maxopen: "20" is not a whole percentage from 1% to 100%, like 20%`},
		{"//breaker:maxopen=101%", OnInterface, `11: maxopen: "101%" is not a whole percentage from 1% to 100%, like 20%`},
		{"//breaker:kye=code", OnInterface, `11: unknown key "kye"; did you mean "key"?`},
		{"//breaker:\t=3", OnInterface, `12: "=3": missing key before =`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, errs := Parse(tt.line, pos(1), tt.where)
			require.NotEmpty(t, errs)
			assert.Equal(t, "a.go:3:"+tt.want, errs[0].Error())
		})
	}
}

func TestScan(t *testing.T) {
	src := `package x

// X is documented.
//
//breaker:name=x
// breaker:name=spaced
//   breaker:name=spaced2
/* breaker:name=block */
//Breaker:skip
//breakers:name=y
//breakr:name=z
//lint:ignore U1000 a directive of another tool
//nolint:lll
//beaker_bunsen: a directive of another tool, far from breaker
type X interface{}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "a.go", src, parser.ParseComments)
	require.NoError(t, err)
	doc := f.Decls[0].(*ast.GenDecl).Doc
	assert.NotContains(t, doc.Text(), "breaker:name=x", "Text() drops directive lines: Scan must read List")
	lines, errs, warns := Scan(fset, doc, OnInterface)
	require.Empty(t, errs)
	require.Len(t, lines, 1)
	assert.Equal(t, "x", lines[0].Options[0].Value.Name)
	assert.Equal(t, 5, lines[0].Pos.Line)
	require.Len(t, warns, 6)
	assert.Contains(t, warns[0].Error(), "a.go:6:1: warning:")
	assert.Contains(t, warns[1].Error(), "a.go:7:1: warning:")
	assert.Contains(t, warns[2].Error(), "a.go:8:1: warning:")
	assert.Contains(t, warns[2].Error(), "write //breaker:name=block")
	// Misspelt prefixes, which would leave a method unguarded or a skip
	// undone without a word.
	assert.Equal(t, `a.go:9:1: warning: "//Breaker:skip" is not an annotation, and does nothing: an annotation starts with //breaker: (lower case); write //breaker:skip`, warns[3].Error())
	assert.Contains(t, warns[4].Error(), `a.go:10:1: warning: "//breakers:name=y" is not an annotation`)
	assert.Contains(t, warns[5].Error(), `a.go:11:1: warning: "//breakr:name=z" is not an annotation`)
}

func TestNearMiss(t *testing.T) {
	for _, w := range []string{"Breaker", "BREAKER", "breakers", "breakr", "braeker", "brekaer", "breake"} {
		assert.True(t, nearMiss(w), w)
	}
	for _, w := range []string{"breaker", "broker", "break", "reader", "speaker", "go", "nolint", "lint", "brakes"} {
		assert.False(t, nearMiss(w), w)
	}
}

// FuzzParse: the parser never panics, every error and warning has a
// position on the line, and every option it keeps has a value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"//breaker:name=eastmoney threshold=5 reset=30s ratelimit=1.5/3",
		"//breaker:methods=Kline*,Finance* timeout=2s maxwait=100ms exclude=io.EOF",
		"//breaker:skip",
		"//breaker:=",
		"//breaker:name==",
		"//breaker:treshold=3 attempts=2",
		"//breaker:ratelimit=1e309/1",
		"//breaker:attempts=2 backoff=100ms..2s budget=6",
		"//breaker:valid=- stale=0 stalesize=9",
		"//breaker:methods=[",
		"//breaker:\xff=\xfe",
		"//breaker:name=a // threshold=3",
		"//breaker:name=a threshold=3 // trip fast",
		"//breaker:name=a,threshold=3 methods=A,B, timeout=1s",
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, rest string, onMethod bool) {
		if strings.ContainsAny(rest, "\n\r") {
			return // a line comment ends at the line's end
		}
		line := rest
		if !strings.HasPrefix(line, Prefix) {
			line = Prefix + rest
		}
		where := OnInterface
		if onMethod {
			where = OnMethod
		}
		p := pos(1)
		l, errs := Parse(line, p, where)
		require.NotNil(t, l)
		for _, e := range append(errs, l.Warnings...) {
			require.True(t, e.Pos.IsValid(), "error without a position: %v", e)
			require.Equal(t, p.Line, e.Pos.Line)
			require.GreaterOrEqual(t, e.Pos.Column, 1)
			require.LessOrEqual(t, e.Pos.Column, len(line)+1)
			require.NotEmpty(t, e.Msg)
		}
		for _, o := range l.Options {
			k := lookupKey(o.Key)
			require.NotNil(t, k, "option of an unknown key %s", o.Key)
			require.Equal(t, k.Flag(), o.Raw == "", "option %s: a value exactly when the key takes one", o.Key)
		}
	})
}

func TestParseRetryKeys(t *testing.T) {
	l, errs := Parse("//breaker:attempts=2 backoff=100ms..2s budget=6", pos(1), OnMethod)
	require.Empty(t, errs)
	want := []Option{
		{Key: "attempts", Raw: "2", Value: Value{Count: 2}, Pos: pos(11)},
		{Key: "backoff", Raw: "100ms..2s", Value: Value{Backoff: Backoff{D: 100 * time.Millisecond, Max: 2 * time.Second}}, Pos: pos(22)},
		{Key: "budget", Raw: "6", Value: Value{Count: 6}, Pos: pos(40)},
	}
	assert.Equal(t, want, l.Options)
	l, errs = Parse("//breaker:backoff=250ms", pos(1), OnInterface)
	require.Empty(t, errs)
	assert.Equal(t, Backoff{D: 250 * time.Millisecond}, l.Options[0].Value.Backoff)
	assert.Equal(t, "250ms", l.Options[0].Value.Backoff.String())
	assert.Equal(t, "100ms..2s", Backoff{D: 100 * time.Millisecond, Max: 2 * time.Second}.String())
}

func TestParseValidStale(t *testing.T) {
	l, errs := Parse("//breaker:valid=quotes.Valid stale=24h stalesize=64", pos(1), OnInterface)
	require.Empty(t, errs)
	assert.Equal(t, "quotes.Valid", l.Options[0].Value.Name)
	assert.Equal(t, 24*time.Hour, l.Options[1].Value.Duration)
	assert.Equal(t, 64, l.Options[2].Value.Count)
	l, errs = Parse("//breaker:valid=- stale=0", pos(1), OnMethod)
	require.Empty(t, errs)
	assert.Equal(t, "-", l.Options[0].Value.Name)
	assert.Equal(t, time.Duration(0), l.Options[1].Value.Duration)
}

func TestParseWindowLoadKeys(t *testing.T) {
	l, errs := Parse("//breaker:window=100 failrate=50% minimum=20 slow=2s slowrate=80% inflight=30s concurrency=4 throttle=1.5", pos(1), OnInterface)
	require.Empty(t, errs)
	var got []Value
	for _, o := range l.Options {
		got = append(got, o.Value)
	}
	assert.Equal(t, []Value{
		{Count: 100}, {Number: 0.5}, {Count: 20}, {Duration: 2 * time.Second},
		{Number: 0.8}, {Duration: 30 * time.Second}, {Count: 4}, {Number: 1.5},
	}, got)
	l, errs = Parse("//breaker:window=1m", pos(1), OnMethod)
	require.Empty(t, errs)
	assert.Equal(t, Value{Duration: time.Minute}, l.Options[0].Value)
	assert.False(t, Value{Number: 0.5}.Equal(Value{Number: 0.6}), "rates that differ conflict")
}

func TestParseTrailingComment(t *testing.T) {
	l, errs := Parse("//breaker:name=a threshold=3 // trip fast", pos(1), OnInterface)
	require.Empty(t, errs)
	require.Len(t, l.Options, 2, "the keys before the comment apply")
	require.Len(t, l.Warnings, 1)
	assert.Equal(t, `a.go:3:30: warning: the trailing comment "// trip fast" is ignored: a //breaker: line holds only keys; put the comment on a line of its own above it`, l.Warnings[0].Error())

	for _, line := range []string{"//breaker:name=a // threshold=3", "//breaker:name=a //skip", "//breaker:name=a // attempts=2 chain"} {
		l, errs = Parse(line, pos(1), OnInterface)
		require.Len(t, errs, 1, line)
		assert.Contains(t, errs[0].Error(), "a.go:3:18: ", line)
		assert.Contains(t, errs[0].Msg, "reads as keys", line)
		assert.Empty(t, l.Warnings, line)
		assert.Len(t, l.Options, 1, line)
	}
}

func TestParseCommaKeys(t *testing.T) {
	tests := []struct{ line, want string }{
		{"//breaker:name=x,threshold=3", `11: keys are separated by spaces, not commas: write "name=x threshold=3"`},
		{"//breaker:name=x, threshold=3", `11: keys are separated by spaces, not commas: write "name=x threshold=3"`},
		{"//breaker:methods=Get,Put,timeout=1s", `11: keys are separated by spaces, not commas: write "methods=Get,Put timeout=1s"`},
		{"//breaker:chain,name=x", `11: keys are separated by spaces, not commas: write "chain name=x"`},
		{"//breaker:name=x,chain", `11: keys are separated by spaces, not commas: write "name=x chain"`},
		{"//breaker:methods=Get,skip,timeout=1s", `11: keys are separated by spaces, not commas: write "methods=Get,skip timeout=1s"`},
	}
	for _, tt := range tests {
		_, errs := Parse(tt.line, pos(1), OnInterface)
		require.Len(t, errs, 1, tt.line)
		assert.Equal(t, "a.go:3:"+tt.want, errs[0].Error())
	}
	// Comma lists stay lists; a method may be called skip.
	_, errs := Parse("//breaker:methods=Get,skip exclude=ErrA,io.EOF", pos(1), OnInterface)
	assert.Empty(t, errs)
	_, errs = Parse("//breaker:methods=Get, name=x", pos(1), OnInterface)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Msg, `write "methods=Get name=x"`)
}
