// Package annotation finds and parses //breaker: lines.
//
// It checks each line on its own (syntax, values, duplicate keys, keys that
// do not belong where they are written); what needs the whole run (routing,
// settings shared by name, exclude identifiers) is the model's job. Every
// error carries the position of the key or line it is about.
//
// Adding a key is adding an entry to [keys] (and, until it is built, the
// key sits in [notYet]).
package annotation

import (
	"cmp"
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

// Option is one key of a line with its parsed value: a string (name), int,
// time.Duration, Rate, Backoff, []string (methods, exclude) or bool (flags).
type Option struct {
	Key   string
	Raw   string // the value as written; "" for a flag
	Value any
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

type spec struct {
	scope Scope
	flag  bool                       // a bare word, no value
	where []Where                    // where it may be written; nil: anywhere
	parse func(string) (any, string) // value, or a problem ("" if none)
}

// keys is the table of supported keys.
var keys = map[string]spec{
	"name":      {scope: RoutingScope, parse: parseName},
	"threshold": {scope: NameScope, parse: parseCount},
	"reset":     {scope: NameScope, parse: parseDuration},
	"halfopen":  {scope: NameScope, parse: parseCount},
	"successes": {scope: NameScope, parse: parseCount},
	"ratelimit": {scope: NameScope, parse: parseRate},
	"maxwait":   {scope: LineScope, parse: parseDuration},
	"timeout":   {scope: LineScope, parse: parseDuration},
	"exclude":   {scope: LineScope, parse: parseIdents},
	"attempts":  {scope: LineScope, parse: parseCount},
	"backoff":   {scope: LineScope, parse: parseBackoff},
	"budget":    {scope: LineScope, parse: parseCount},
	"valid":     {scope: LineScope, parse: parseValid},
	"stale":     {scope: LineScope, parse: parseStale},
	"stalesize": {scope: LineScope, parse: parseCount},
	"methods":   {scope: RoutingScope, where: []Where{OnInterface}, parse: parseGlobs},
	"skip":      {scope: RoutingScope, flag: true, where: []Where{OnMethod}},
	"chain":     {scope: InterfaceScope, flag: true, where: []Where{OnInterface}},
}

// notYet lists keys that are specified but not built yet.
var notYet = []string{"window", "rate", "slowcall", "inflight"}

// KeyScope returns the scope of a supported key.
func KeyScope(key string) Scope { return keys[key].scope }

// NameKeys lists the keys of [NameScope] in a fixed order.
func NameKeys() []string { return sortedKeys(NameScope) }

// LineKeys lists the keys of [LineScope] in a fixed order.
func LineKeys() []string { return sortedKeys(LineScope) }

func sortedKeys(s Scope) []string {
	var out []string
	for k, sp := range keys {
		if sp.scope == s {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

var spaced = regexp.MustCompile(`^//\s+breaker:`)

// Scan returns the //breaker: lines of a comment group written at where,
// the errors in them, and warnings for lines that look like annotations but
// are not (`// breaker:` with a space). It reads cg.List, not cg.Text(),
// which drops directive-shaped lines.
func Scan(fset *token.FileSet, cg *ast.CommentGroup, where Where) (lines []*Line, errs, warnings []*Error) {
	if cg == nil {
		return nil, nil, nil
	}
	for _, c := range cg.List {
		pos := fset.Position(c.Slash)
		switch {
		case strings.HasPrefix(c.Text, Prefix):
			l, e := Parse(c.Text, pos, where)
			lines = append(lines, l)
			errs = append(errs, e...)
		case spaced.MatchString(c.Text):
			warnings = append(warnings, Errorf(pos, "warning: %q is an ordinary comment; write //breaker: without a space to make it an annotation", c.Text))
		}
	}
	return lines, errs, warnings
}

// Parse parses one comment, "//breaker:" included, written at pos (the
// position of its "//"). It returns the line (with every option that
// parsed) and every problem found.
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
		off += j
		rest = rest[j:]

		key, val, hasVal := strings.Cut(word, "=")
		sp, ok := keys[key]
		switch {
		case key == "":
			errs = append(errs, Errorf(wpos, "%q: missing key before =", word))
			continue
		case slices.Contains(notYet, key):
			errs = append(errs, Errorf(wpos, "%s: not supported yet", key))
			continue
		case !ok:
			errs = append(errs, Errorf(wpos, "unknown key %q%s", key, hint(key)))
			continue
		}
		if prev, dup := seen[key]; dup {
			errs = append(errs, Errorf(wpos, "%s: duplicate key (first given at column %d)", key, prev.Column))
			continue
		}
		seen[key] = wpos
		if sp.where != nil && !slices.Contains(sp.where, where) {
			if where == OnInterface {
				errs = append(errs, Errorf(wpos, "%s: only allowed on a method's line, not on the interface", key))
			} else {
				errs = append(errs, Errorf(wpos, "%s: only allowed on the interface's lines, not on a method", key))
			}
			continue
		}
		o := Option{Key: key, Raw: val, Pos: wpos}
		switch {
		case sp.flag && hasVal:
			errs = append(errs, Errorf(wpos, "%s: is a flag and takes no value", key))
			continue
		case sp.flag:
			o.Value = true
		case !hasVal:
			errs = append(errs, Errorf(wpos, "%s: missing value (write %s=...)", key, key))
			continue
		default:
			v, problem := sp.parse(val)
			if problem != "" {
				errs = append(errs, Errorf(wpos, "%s: %s", key, problem))
				continue
			}
			o.Value = v
		}
		l.Options = append(l.Options, o)
	}
	if p, ok := seen["skip"]; ok && len(seen) > 1 {
		errs = append(errs, Errorf(p, "skip: must be alone on its line"))
	}
	return l, errs
}

// hint suggests a supported key close to an unknown one.
func hint(key string) string {
	best, bestD := "", 3
	var cands []string
	for k := range keys {
		cands = append(cands, k)
	}
	cands = append(cands, notYet...)
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
	for k := range keys {
		out = append(out, k)
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

func parseName(s string) (any, string) {
	if !nameRE.MatchString(s) {
		return nil, fmt.Sprintf("%q is not a valid name (lower-case letters, digits and _ . : -)", s)
	}
	return s, ""
}

func parseCount(s string) (any, string) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return nil, fmt.Sprintf("%q is not an integer >= 1", s)
	}
	return n, ""
}

func parseDuration(s string) (any, string) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return nil, fmt.Sprintf("%q is not a positive Go duration (like 500ms, 30s, 2m)", s)
	}
	return d, ""
}

func parseBackoff(s string) (any, string) {
	lo, hi, ranged := strings.Cut(s, "..")
	d, err := time.ParseDuration(lo)
	if err != nil || d <= 0 {
		return nil, fmt.Sprintf("%q is not D or D..MAX with positive Go durations, like 100ms or 100ms..2s", s)
	}
	if !ranged {
		return Backoff{D: d}, ""
	}
	m, err := time.ParseDuration(hi)
	if err != nil || m <= 0 {
		return nil, fmt.Sprintf("%q is not D or D..MAX with positive Go durations, like 100ms or 100ms..2s", s)
	}
	if m < d {
		return nil, fmt.Sprintf("%q: the cap %s is below the first wait %s", s, m, d)
	}
	return Backoff{D: d, Max: m}, ""
}

// parseValid reads the name of a func, or "-" (no valid func).
func parseValid(s string) (any, string) {
	if s == "-" || identRE.MatchString(s) && s != "_" {
		return s, ""
	}
	return nil, fmt.Sprintf("%q is not a func identifier (like isValid or quotes.Valid), or - for none", s)
}

// parseStale reads a duration; 0 means no stale cache.
func parseStale(s string) (any, string) {
	if s == "0" {
		return time.Duration(0), ""
	}
	return parseDuration(s)
}

func parseRate(s string) (any, string) {
	r, b, ok := strings.Cut(s, "/")
	per, err1 := strconv.ParseFloat(r, 64)
	burst, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || !(per > 0) || math.IsInf(per, 0) || burst < 1 {
		return nil, fmt.Sprintf("%q is not R/B (tokens per second > 0, burst >= 1), like 1.5/3", s)
	}
	return Rate{Per: per, Burst: burst}, ""
}

var identRE = regexp.MustCompile(`^(?:[\pL_][\pL\pN_]*\.)?[\pL_][\pL\pN_]*$`)

func parseIdents(s string) (any, string) {
	parts := strings.Split(s, ",")
	for _, p := range parts {
		if !identRE.MatchString(p) || p == "_" {
			return nil, fmt.Sprintf("%q is not an error identifier (like ErrNotFound or io.EOF)", p)
		}
	}
	return parts, ""
}

func parseGlobs(s string) (any, string) {
	parts := strings.Split(s, ",")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Sprintf("%q has an empty method pattern", s)
		}
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Sprintf("%q is not a valid pattern: %v", p, err)
		}
	}
	return parts, ""
}

// Match reports whether a method name matches a methods pattern.
func Match(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}
