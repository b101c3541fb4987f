// Package annotation finds and parses //breaker: lines.
//
// It checks each line on its own (syntax, values, duplicate keys, keys that
// do not belong where they are written); what needs the whole run (routing,
// settings shared by name, exclude identifiers) is the model's job. Every
// error carries the position of the key or line it is about.
//
// Adding a key is adding an entry to the one table of keys in keys.go (and,
// until it is built, the key sits in its list of keys not supported yet);
// the manual, the README's table, the did-you-mean hints and the usage
// text come from that table ([MarkdownTable], [ManualTable], [UsageTable]).
package annotation

import (
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/breakergen/breakergen/internal/ratelimit"
	"github.com/breakergen/breakergen/internal/setting"
)

// Prefix starts every annotation line.
const Prefix = "//breaker:"

// Error is a problem at a position in a source file.
type Error struct {
	Pos token.Position
	Msg string
}

func (e *Error) Error() string {
	if !e.Pos.IsValid() {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// Errorf returns an [*Error] at pos.
func Errorf(pos token.Position, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// SortErrors sorts errors by file, line, column, then message.
func SortErrors(errs []*Error) {
	slices.SortFunc(errs, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
}

// Scope says what a key belongs to.
type Scope int

const (
	// NameScope keys configure the breaker or limiter of a name and are
	// shared by every route that names it.
	NameScope Scope = iota
	// LineScope keys apply to the methods one line routes.
	LineScope
	// RoutingScope keys say which methods a line routes (name, methods,
	// skip).
	RoutingScope
	// InterfaceScope keys say what to write for the whole interface
	// (chain), whichever of its lines gives them.
	InterfaceScope
)

// Where says where a line was written.
type Where int

const (
	// OnInterface is a line in an interface's doc comment.
	OnInterface Where = iota
	// OnMethod is a line in a method's doc comment inside an interface.
	OnMethod
)

// Rate is the value of ratelimit: Per tokens per second, burst Burst.
type Rate struct {
	Per   float64
	Burst int
}

func (r Rate) String() string {
	return strconv.FormatFloat(r.Per, 'g', -1, 64) + "/" + strconv.Itoa(r.Burst)
}

// Backoff is the value of backoff: a fixed wait D, or, when Max > 0,
// exponential from D capped at Max with full jitter.
type Backoff struct {
	D, Max time.Duration
}

func (b Backoff) String() string {
	if b.Max > 0 {
		return b.D.String() + ".." + b.Max.String()
	}
	return b.D.String()
}

// Value is the parsed value of an option: the field its key's parser
// fills is set, the others are zero. A flag has none.
type Value struct {
	Name string // name; valid (a func identifier, or "-"); key
	// Count: threshold, halfopen, successes, minimum, concurrency,
	// attempts, budget, stalesize, hedges, keys, maxopen (a percentage);
	// window N.
	Count int
	// Duration: reset, slow, inflight, maxwait, timeout, stale (0: no
	// cache), hedge; window D.
	Duration time.Duration
	Number   float64  // failrate, slowrate, jitter (as fractions), throttle
	Rate     Rate     // ratelimit
	Backoff  Backoff  // backoff; reset D..MAX
	List     []string // methods, exclude
}

// Equal reports whether v and w are the same value.
func (v Value) Equal(w Value) bool {
	return v.Name == w.Name && v.Count == w.Count && v.Duration == w.Duration && v.Number == w.Number &&
		v.Rate == w.Rate && v.Backoff == w.Backoff && slices.Equal(v.List, w.List)
}

// Option is one key of a line with its parsed value.
type Option struct {
	Key   string
	Raw   string // the value as written; "" for a flag
	Value Value
	Pos   token.Position // of the key
}

// ItemPos returns the position of the i-th item of a comma list value.
func (o Option) ItemPos(i int) token.Position {
	off := len(o.Key) + 1
	for j, item := range strings.Split(o.Raw, ",") {
		if j == i {
			break
		}
		off += len(item) + 1
	}
	p := o.Pos
	p.Offset += off
	p.Column += off
	return p
}

// Line is one //breaker: line.
type Line struct {
	Pos     token.Position // of the "//"
	Where   Where
	Options []Option // in the order written
	// Invalid are the keys given with a value that did not parse, each
	// already an error, so that later checks do not take the line for
	// one without them.
	Invalid []string
	// Warnings are the problems of the line that leave it valid (a
	// trailing comment), each starting "warning: ".
	Warnings []*Error
	// Empty reports that the line gives no word at all (a bare
	// //breaker:, or one followed only by a comment).
	Empty bool
}

// Get returns the option key of the line.
func (l *Line) Get(key string) (Option, bool) {
	for _, o := range l.Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// Has reports whether the line gives key.
func (l *Line) Has(key string) bool {
	_, ok := l.Get(key)
	return ok
}

// Skip reports whether the line is //breaker:skip.
func (l *Line) Skip() bool { return l.Has("skip") }

var (
	spaced = regexp.MustCompile(`^//\s+breaker:`)
	block  = regexp.MustCompile(`^/\*\s*breaker:`)
	// directive is a line shaped like a directive, //word:..., whose word
	// nearMiss then compares with breaker.
	directive = regexp.MustCompile(`^//([A-Za-z_]+):`)
)

// nearMiss reports whether word, a directive's, is "breaker" misspelt
// (Breaker, BREAKER, breakers, breakr, braeker): one edit or one swap of
// adjacent letters from it, ignoring case. Other directives (go:generate,
// nolint:, a broker: of another tool) are further.
func nearMiss(word string) bool { return NearMiss(word) }

// NearMiss reports whether word, the word of a directive-shaped comment
// (//word:), is "breaker" misspelt: see Scan.
func NearMiss(word string) bool {
	w := strings.ToLower(word)
	if word == "breaker" {
		return false
	}
	if distance(w, "breaker") <= 1 {
		return true
	}
	for i := 0; i+1 < len(w); i++ {
		if w[:i]+w[i+1:i+2]+w[i:i+1]+w[i+2:] == "breaker" {
			return true
		}
	}
	return false
}

// Scan returns the //breaker: lines of a comment group written at where,
// the errors in them, and warnings for lines that look like annotations but
// are not (`// breaker:` with a space, `/*breaker:...*/`, a misspelt
// `//Breaker:` or `//breakers:`). It reads
// cg.List, not cg.Text(), which drops directive-shaped lines.
func Scan(fset *token.FileSet, cg *ast.CommentGroup, where Where) (lines []*Line, errs, warnings []*Error) {
	if cg == nil {
		return nil, nil, nil
	}
	// gofmt reformats a doc comment whose first line starts in the first
	// column (go/printer decides on the group, not on each line).
	docCol := fset.Position(cg.Pos()).Column
	for _, c := range cg.List {
		pos := fset.Position(c.Slash)
		switch {
		case strings.HasPrefix(c.Text, Prefix):
			if e := gofmtRewrites(c.Text, pos, where, docCol); e != nil {
				errs = append(errs, e) // the line is still scanned: a misplaced one is said to be
			}
			l, e := Parse(c.Text, pos, where)
			lines = append(lines, l)
			errs = append(errs, e...)
			warnings = append(warnings, l.Warnings...)
		case spaced.MatchString(c.Text):
			warnings = append(warnings, Errorf(pos, "warning: %q is an ordinary comment; write //breaker: without a space to make it an annotation", c.Text))
		case block.MatchString(c.Text):
			warnings = append(warnings, Errorf(pos, "warning: %q is an ordinary comment; an annotation is a line comment: write //breaker:%s", c.Text, blockBody(c.Text)))
		default:
			if m := directive.FindStringSubmatch(c.Text); m != nil && nearMiss(m[1]) {
				lower := ""
				if strings.ToLower(m[1]) == "breaker" {
					lower = " (lower case)"
				}
				warnings = append(warnings, Errorf(pos, "warning: %q is not an annotation, and does nothing: an annotation starts with //breaker:%s; write %s%s", c.Text, lower, Prefix, c.Text[len(m[0]):]))
			}
		}
	}
	return lines, errs, warnings
}

// gofmtRewrites returns the error for an annotation written at pos, in a
// doc comment whose first line starts in column docCol, that gofmt would
// rewrite to an ordinary comment, or nil. gofmt reformats a doc comment
// whose first line starts in the first column (a declaration's, not a
// spec's inside "type ( ... )" nor a method's), and keeps a line of it as
// it is only when it reads as a directive ("//word:" and a lower-case
// letter or digit): any other line it rewrites to "// breaker:...", and
// the annotation would be lost at the next gofmt.
func gofmtRewrites(text string, pos token.Position, where Where, docCol int) *Error {
	rest := strings.TrimPrefix(text, Prefix)
	if where != OnInterface || docCol != 1 || gofmtKeeps(rest) {
		return nil
	}
	fix := strings.TrimLeft(rest, " \t")
	switch {
	case fix == "" || strings.HasPrefix(fix, "//"):
		return Errorf(pos, "%s with no key on a type: gofmt rewrites the line to the ordinary comment \"// breaker:...\", and the annotation is lost; give it a key right after the colon, such as its name: %sname=NAME", Prefix, Prefix)
	case fix != rest:
		return Errorf(pos, "a space after %q: gofmt rewrites the line to the ordinary comment \"// breaker: ...\", and the annotation is lost; write %s%s", Prefix, Prefix, fix)
	}
	return nil // an upper-case word: no key either, as Parse says
}

// gofmtKeeps reports whether gofmt keeps a doc comment line whose text
// after "//breaker:" is rest as it is (go/printer's isDirective): rest
// must start with a lower-case ASCII letter or a digit.
func gofmtKeeps(rest string) bool {
	return rest != "" && ('a' <= rest[0] && rest[0] <= 'z' || '0' <= rest[0] && rest[0] <= '9')
}

// blockBody returns what a /*breaker:...*/ comment says after "breaker:",
// on one line.
func blockBody(text string) string {
	_, body, _ := strings.Cut(text, "breaker:")
	return strings.Join(strings.Fields(strings.TrimSuffix(body, "*/")), " ")
}

// Parse parses one comment, "//breaker:" included, written at pos (the
// position of its "//"). It returns the line (with every option that
// parsed, and its warnings) and every error found. A word starting with
// "//" ends the keys: the rest is a trailing comment, ignored with a
// warning, or an error when every word of it reads as a key.
func Parse(text string, pos token.Position, where Where) (*Line, []*Error) {
	l := &Line{Pos: pos, Where: where}
	var errs []*Error
	at := func(off int) token.Position {
		p := pos
		p.Offset += off
		p.Column += off
		return p
	}
	if !strings.HasPrefix(text, Prefix) {
		return l, []*Error{Errorf(pos, "not a %s line", Prefix)}
	}
	seen := map[string]token.Position{}
	l.Empty = true
	off := len(Prefix)
	rest := text[off:]
	for len(rest) > 0 {
		// Skip white space.
		i := strings.IndexFunc(rest, func(r rune) bool { return r != ' ' && r != '\t' })
		if i < 0 {
			break
		}
		off += i
		rest = rest[i:]
		j := strings.IndexAny(rest, " \t")
		if j < 0 {
			j = len(rest)
		}
		word := rest[:j]
		wpos := at(off)
		if strings.HasPrefix(word, "//") {
			// A trailing comment: the line's keys end here.
			if e := trailingComment(rest, wpos); strings.HasPrefix(e.Msg, "warning: ") {
				l.Warnings = append(l.Warnings, e)
			} else {
				errs = append(errs, e)
			}
			break
		}
		off += j
		rest = rest[j:]
		l.Empty = false

		key, val, hasVal := strings.Cut(word, "=")
		sp := lookupKey(key)
		if fix, ok := commaKeys(word, rest); ok {
			errs = append(errs, Errorf(wpos, "keys are separated by spaces, not commas: write %q", fix))
			if sp != nil {
				l.Invalid = append(l.Invalid, key)
			}
			continue
		}
		switch {
		case key == "":
			errs = append(errs, Errorf(wpos, "%q: missing key before =", word))
			continue
		case slices.Contains(settingsOnly, key):
			errs = append(errs, Errorf(wpos, "%s: a setting only, never an annotation (nobody should commit chaos into code): use runtime.Config.%s, WithConfig or BREAKER_<NAME>_%s; see docs/rehearse.md",
				key, settingsOnlyField[key], strings.ToUpper(key)))
			continue
		case slices.Contains(notYet, key):
			errs = append(errs, Errorf(wpos, "%s: not supported yet", key))
			continue
		case sp == nil:
			errs = append(errs, Errorf(wpos, "unknown key %q%s", key, hint(key)))
			continue
		}
		if prev, dup := seen[key]; dup {
			errs = append(errs, Errorf(wpos, "%s: duplicate key (first given at column %d)", key, prev.Column))
			continue
		}
		seen[key] = wpos
		if sp.Where != nil && !slices.Contains(sp.Where, where) {
			if where == OnInterface {
				errs = append(errs, Errorf(wpos, "%s: only allowed on a method's line, not on the interface", key))
			} else {
				errs = append(errs, Errorf(wpos, "%s: only allowed on the interface's lines, not on a method", key))
			}
			continue
		}
		o := Option{Key: key, Raw: val, Pos: wpos}
		switch {
		case sp.Flag() && hasVal:
			errs = append(errs, Errorf(wpos, "%s: is a flag and takes no value", key))
			l.Invalid = append(l.Invalid, key)
			continue
		case sp.Flag():
		case !hasVal:
			errs = append(errs, Errorf(wpos, "%s: missing value (write %s=...)", key, key))
			l.Invalid = append(l.Invalid, key)
			continue
		default:
			if problem := sp.parse(val, &o.Value); problem != "" {
				errs = append(errs, Errorf(wpos, "%s: %s", key, problem))
				l.Invalid = append(l.Invalid, key)
				continue
			}
		}
		l.Options = append(l.Options, o)
	}
	if p, ok := seen["skip"]; ok && len(seen) > 1 {
		errs = append(errs, Errorf(p, "skip: must be alone on its line"))
	}
	return l, errs
}

// trailingComment judges text, the rest of a line from a "//" after its
// keys (at pos): an error when every word after the "//" reads as a key
// (key=value with a known key, or a known flag), which is surely keys
// meant to apply or keys commented out in the wrong place; else a warning
// that the comment is ignored.
func trailingComment(text string, pos token.Position) *Error {
	words := strings.Fields(strings.TrimLeft(text, "/"))
	keysLike := len(words) > 0
	for _, w := range words {
		keysLike = keysLike && keyShaped(w)
	}
	if keysLike {
		return Errorf(pos, "%q after the keys reads as keys, which would be ignored: a //breaker: line ends at a //; write the keys before it, or delete them", text)
	}
	return Errorf(pos, "warning: the trailing comment %q is ignored: a //breaker: line holds only keys; put the comment on a line of its own above it", text)
}

// keyShaped reports whether word is key=value with a known key, or a
// known flag.
func keyShaped(word string) bool {
	key, _, hasVal := strings.Cut(word, "=")
	if slices.Contains(notYet, key) {
		return hasVal
	}
	k := lookupKey(key)
	return k != nil && (hasVal || k.Flag())
}

// commaKeys reports whether word (followed on its line by rest) holds
// keys separated by commas (name=x,threshold=3; name=x, threshold=3), and
// returns the words as they should be written. A comma list value
// (methods=A,B) has no key after a comma.
func commaKeys(word, rest string) (string, bool) {
	parts := strings.Split(word, ",")
	isKey := func(p string) bool { return keyShaped(p) && (strings.Contains(p, "=") || !listKey(parts[0])) }
	found := slices.ContainsFunc(parts[1:], isKey)
	if !found && strings.HasSuffix(word, ",") && len(parts) > 1 {
		next := strings.Fields(rest)
		if len(next) > 0 && keyShaped(strings.TrimSuffix(next[0], ",")) {
			return strings.TrimSuffix(word, ",") + " " + next[0], true
		}
	}
	if !found {
		return "", false
	}
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i == 0:
		case isKey(p):
			b.WriteByte(' ')
		default:
			b.WriteByte(',')
		}
		b.WriteString(p)
	}
	return b.String(), true
}

// listKey reports whether the first part of a word, key=value, gives a key
// whose value is a comma list: a bare word after its comma is an item
// (methods=Get,skip routes a method skip), not a flag.
func listKey(first string) bool {
	key, _, _ := strings.Cut(first, "=")
	return key == "methods" || key == "exclude"
}

// hint suggests a supported key close to an unknown one.
// settingsOnly are the keys of fault injection (SPEC §13), which the
// runtime takes from its settings alone; settingsOnlyField names their
// runtime.Config fields.
var (
	settingsOnly      = []string{"fault", "latency"}
	settingsOnlyField = map[string]string{"fault": "Fault", "latency": "Latency"}
)

func hint(key string) string {
	best, bestD := "", 3
	cands := append(knownKeys(), notYet...)
	slices.Sort(cands)
	for _, k := range cands {
		if d := distance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return "; known keys: " + strings.Join(knownKeys(), ", ")
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

func knownKeys() []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.Name)
	}
	slices.Sort(out)
	return out
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

var nameRE = regexp.MustCompile(`^[a-z0-9_.:-]+$`)

// ValidName reports whether s fits the grammar of a breaker name, as a
// name= value must.
func ValidName(s string) bool { return nameRE.MatchString(s) }

func parseName(s string, v *Value) string {
	if !nameRE.MatchString(s) {
		return fmt.Sprintf("%q is not a valid name (lower-case letters, digits and _ . : -)", s)
	}
	v.Name = s
	return ""
}

func parseCount(s string, v *Value) string {
	n, err := strconv.Atoi(s)
	if tooLarge(s, err) {
		return fmt.Sprintf("%q is above the largest integer, %d", s, math.MaxInt)
	}
	if err != nil || n < 1 {
		return fmt.Sprintf("%q is not an integer >= 1", s)
	}
	v.Count = n
	return ""
}

// tooLarge reports whether s, which strconv.Atoi refused with err, is a
// whole number above the largest int.
func tooLarge(s string, err error) bool {
	return errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-")
}

// short writes a cap as the docs do: 1e9, not 1e+09.
func short(x float64) string {
	return strings.Replace(strconv.FormatFloat(x, 'g', -1, 64), "e+0", "e", 1)
}

// durationRE matches what time.ParseDuration reads, save the sign: a value
// it matches but that ParseDuration refuses is too long.
var durationRE = regexp.MustCompile(`^\+?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$`)

func parseDuration(s string, v *Value) string {
	d, err := time.ParseDuration(s)
	if err != nil && durationRE.MatchString(s) {
		return fmt.Sprintf("%q is above the longest Go duration, %s", s, time.Duration(math.MaxInt64))
	}
	if err != nil || d <= 0 {
		if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 && bareNumber.MatchString(s) {
			if n >= 100 {
				// timeout=500 is most often milliseconds, reset=30 seconds.
				return fmt.Sprintf("%q is not a positive Go duration (like 500ms, 30s, 2m): a duration needs its unit; did you mean %sms or %ss?", s, s, s)
			}
			return fmt.Sprintf("%q is not a positive Go duration (like 500ms, 30s, 2m): a duration needs its unit; did you mean %ss?", s, s)
		}
		if c := durationHint(s); c != "" {
			return fmt.Sprintf("%q is not a positive Go duration (like 500ms, 30s, 2m); did you mean %s?", s, c)
		}
		return fmt.Sprintf("%q is not a positive Go duration (like 500ms, 30s, 2m)", s)
	}
	v.Duration = d
	return ""
}

// bareNumber is a number as a newcomer writes a duration without its unit:
// digits, perhaps a fraction (not 1e3, Inf or 0x10, which a unit after them
// would not make a duration).
var bareNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// loneM is an M alone as a unit (500M, 1M30s), not a word's (2Minutes).
var loneM = regexp.MustCompile(`[0-9.]M([^a-zA-Z]|$)`)

// unitWords are the spellings of a unit that Go's durations do not read,
// longest first, and Go's.
var unitWords = []struct{ word, unit string }{
	{"milliseconds", "ms"}, {"millisecond", "ms"}, {"millis", "ms"}, {"msecs", "ms"}, {"msec", "ms"},
	{"seconds", "s"}, {"second", "s"}, {"secs", "s"}, {"sec", "s"},
	{"minutes", "m"}, {"minute", "m"}, {"mins", "m"}, {"min", "m"},
	{"hours", "h"}, {"hour", "h"}, {"hrs", "h"}, {"hr", "h"},
}

// durationHint returns the Go duration a newcomer most likely meant by s,
// which time.ParseDuration refused, or "": 30sec, 30S and 2Min are 30s,
// 30s and 2m; 1m30 is 1m30s; 1d is 24h (Go has no unit of days).
func durationHint(s string) string {
	if loneM.MatchString(s) {
		return "" // 500M: minutes, months or mega, who can say
	}
	c := strings.ToLower(strings.TrimSpace(s))
	if c == "" {
		return ""
	}
	for _, w := range unitWords {
		c = strings.ReplaceAll(c, w.word, w.unit)
	}
	for _, day := range []string{"days", "day", "d"} {
		if n, ok := strings.CutSuffix(c, day); ok {
			if days, err := strconv.ParseFloat(n, 64); err == nil && bareNumber.MatchString(n) && days > 0 && days <= 365 {
				c = strconv.FormatFloat(days*24, 'f', -1, 64) + "h"
			}
			break
		}
	}
	if last := c[len(c)-1]; last >= '0' && last <= '9' && strings.ContainsAny(c, "hm") {
		// 1m30: the last number takes the unit after the one before it.
		switch {
		case strings.HasSuffix(strings.TrimRight(c, "0123456789."), "h"):
			c += "m"
		case strings.HasSuffix(strings.TrimRight(c, "0123456789."), "m"):
			c += "s"
		}
	}
	if d, err := time.ParseDuration(c); err == nil && d > 0 && c != s {
		return c
	}
	return ""
}

// parseReset reads reset: D, or D..MAX (an OPEN period that doubles after
// each failed probe), with the parser the runtime uses for
// BREAKER_<NAME>_RESET. D is in Duration, MAX (or 0) in Backoff.Max.
func parseReset(s string, v *Value) string {
	if !strings.Contains(s, "..") {
		if msg := parseDuration(s, v); msg != "" {
			return msg
		}
		if v.Duration > setting.MaxPeriod {
			return fmt.Sprintf("%q is more than %s, the longest OPEN period", s, setting.MaxPeriod)
		}
		return ""
	}
	d, m, err := setting.Reset(s, func(p string) (time.Duration, error) {
		d, err := time.ParseDuration(p)
		if err != nil || d <= 0 {
			return 0, errors.New("not a positive Go duration")
		}
		return d, nil
	})
	if err != nil && (strings.Contains(err.Error(), "below") || strings.Contains(err.Error(), "longest")) {
		return fmt.Sprintf("%q: %v", s, err)
	}
	if err != nil || s != strings.TrimSpace(s) {
		return fmt.Sprintf("%q is not D or D..MAX with positive Go durations, like 30s or 30s..10m", s)
	}
	v.Duration = d
	if m > 0 {
		v.Backoff = Backoff{D: d, Max: m}
	}
	return ""
}

// parseJitter reads jitter, 0% to 100%, as a fraction.
func parseJitter(s string, v *Value) string {
	f, err := setting.Jitter(s, false)
	if err != nil || s != strings.TrimSpace(s) {
		return fmt.Sprintf("%q is not a percentage from 0%% to 100%%, like 20%%", s)
	}
	v.Number = f
	return ""
}

func parseBackoff(s string, v *Value) string {
	bad := fmt.Sprintf("%q is not D or D..MAX with positive Go durations, like 100ms or 100ms..2s", s)
	lo, hi, ranged := strings.Cut(s, "..")
	d, err := time.ParseDuration(lo)
	if err != nil || d <= 0 {
		return bad
	}
	if !ranged {
		v.Backoff = Backoff{D: d}
		return ""
	}
	m, err := time.ParseDuration(hi)
	if err != nil || m <= 0 {
		return bad
	}
	if m < d {
		return fmt.Sprintf("%q: the cap %s is below the first wait %s", s, m, d)
	}
	v.Backoff = Backoff{D: d, Max: m}
	return ""
}

// parseValid reads the name of a func, or "-" (no valid func).
func parseValid(s string, v *Value) string {
	if s == "-" || identRE.MatchString(s) && s != "_" {
		v.Name = s
		return ""
	}
	return fmt.Sprintf("%q is not a func identifier (a func of the package, like check, or of a package the file imports, like pkg.Check), or - for none", s)
}

// parseStale reads a duration; 0 means no stale cache.
func parseStale(s string, v *Value) string {
	if s == "0" {
		return ""
	}
	return parseDuration(s, v)
}

// parseRate reads R/B with the parser the runtime uses (internal/ratelimit),
// so that an annotation accepts exactly what BREAKER_<NAME>_RATELIMIT accepts.
func parseRate(s string, v *Value) string {
	per, burst, err := ratelimit.Parse(s)
	if err != nil && s == strings.TrimSpace(s) {
		// Name the cap a value is above rather than the form it has.
		rs, bs, _ := strings.Cut(s, "/")
		if r, err := strconv.ParseFloat(rs, 64); err == nil && r > ratelimit.MaxRate {
			return fmt.Sprintf("%q: rate %s is above the largest rate, %s tokens per second", s, rs, short(ratelimit.MaxRate))
		}
		if _, err := strconv.Atoi(bs); tooLarge(bs, err) {
			return fmt.Sprintf("%q: burst %s is above the largest integer, %d", s, bs, math.MaxInt)
		}
	}
	if err != nil || s != strings.TrimSpace(s) {
		return fmt.Sprintf("%q is not R/B (tokens per second > 0, burst >= 1), like 1.5/3", s)
	}
	v.Rate = Rate{Per: per, Burst: burst}
	return ""
}

// parseWindow reads N (calls) or D (a duration) with the parser the runtime
// uses for BREAKER_<NAME>_WINDOW.
func parseWindow(s string, v *Value) string {
	n, d, err := setting.Window(s)
	if _, aerr := strconv.Atoi(s); tooLarge(s, aerr) {
		n, err = setting.MaxWindowCalls+1, nil // refused below, as too large
	}
	if err != nil || s != strings.TrimSpace(s) {
		return fmt.Sprintf("%q is not a window: want a number of calls >= %d or a Go duration >= %s, like 100 or 1m", s, setting.MinWindowCalls, setting.MinWindowPeriod)
	}
	if n > setting.MaxWindowCalls {
		return fmt.Sprintf("%q is above the largest count window, %d calls, which the runtime would use instead; for a longer memory give a time window, like 10m", s, setting.MaxWindowCalls)
	}
	v.Count, v.Duration = n, d
	return ""
}

// parseKey reads the name of the parameter that keys a route's breakers,
// or "-" (none: a method line clears an inherited key).
func parseKey(s string, v *Value) string {
	if s != "-" && (!keyRE.MatchString(s) || s == "_") {
		return fmt.Sprintf("%q is not a parameter name (like code, or host for an *http.Request's URL.Host), or - for none", s)
	}
	v.Name = s
	return ""
}

var keyRE = regexp.MustCompile(`^[\pL_][\pL\pN_]*$`)

// parseMaxOpen reads maxopen, a whole percentage from 1% to 100%, into
// Count.
func parseMaxOpen(s string, v *Value) string {
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil || !strings.HasSuffix(s, "%") || n < 1 || n > 100 {
		return fmt.Sprintf("%q is not a whole percentage from 1%% to 100%%, like 20%%", s)
	}
	v.Count = n
	return ""
}

// Closest returns the candidate nearest to word (an edit distance below
// 3), or "".
func Closest(word string, cands []string) string {
	best, bestD := "", 3
	for _, c := range cands {
		if d := distance(strings.ToLower(word), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// parsePercent reads a percentage, 1% to 100%, as a fraction.
func parsePercent(s string, v *Value) string {
	f, err := setting.Percent(s, false)
	if err != nil || s != strings.TrimSpace(s) {
		return fmt.Sprintf("%q is not a percentage from 1%% to 100%%, like 50%%", s)
	}
	v.Number = f
	return ""
}

// parseThrottle reads K of adaptive throttling, a number >= 1.
func parseThrottle(s string, v *Value) string {
	k, err := setting.Throttle(s)
	if f, ferr := strconv.ParseFloat(s, 64); ferr == nil && f > setting.MaxThrottle {
		return fmt.Sprintf("%q is above the largest K, %s", s, short(setting.MaxThrottle))
	}
	if err != nil || s != strings.TrimSpace(s) {
		return fmt.Sprintf("%q is not a number >= 1, like 2 or 1.5", s)
	}
	v.Number = k
	return ""
}

var identRE = regexp.MustCompile(`^(?:[\pL_][\pL\pN_]*\.)?[\pL_][\pL\pN_]*$`)

func parseIdents(s string, v *Value) string {
	parts := strings.Split(s, ",")
	for _, p := range parts {
		if !identRE.MatchString(p) || p == "_" {
			return fmt.Sprintf("%q is not an error identifier (like ErrNotFound or io.EOF)", p)
		}
	}
	if d := twice(parts); d != "" {
		return fmt.Sprintf("%q names %s twice", s, d)
	}
	v.List = parts
	return ""
}

func parseGlobs(s string, v *Value) string {
	parts := strings.Split(s, ",")
	for _, p := range parts {
		if p == "" {
			return fmt.Sprintf("%q has an empty method pattern", s)
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Sprintf("%q is not a valid pattern: %v", p, err)
		}
	}
	if d := twice(parts); d != "" {
		return fmt.Sprintf("%q names %s twice", s, d)
	}
	v.List = parts
	return ""
}

// twice returns the first item of a comma list given twice, or "": a
// repeated item is a slip (a typo for another method or error, or an edit
// left half done), never meant.
func twice(parts []string) string {
	for i, p := range parts {
		if slices.Contains(parts[:i], p) {
			return p
		}
	}
	return ""
}

// Match reports whether a method name matches a methods pattern.
func Match(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}
