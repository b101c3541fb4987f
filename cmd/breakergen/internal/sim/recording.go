// Package sim replays a recording of calls (runtime.WithRecorder) through
// the runtime's real breakers on a synthetic clock, against candidate
// settings, and reports what each setting would have done: the engine of
// `breakergen sim` (docs/rehearse.md).
package sim

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/breakergen/breakergen/runtime"
)

// Class is a recorded call's outcome class.
type Class uint8

// The classes, in the order of runtime.RecordClasses.
const (
	Success Class = iota
	Failure
	Ignored
	Invalid
	Injected
	Rejected
	RateLimited
	Throttled
	BulkheadFull
	Budget
	Canceled
)

var classNames = runtime.RecordClasses()

func (c Class) String() string { return classNames[c] }

// Upstream reports whether the class says what the upstream did (or, for
// an injected fault, what the breaker saw): not a refusal before it.
func (c Class) Upstream() bool { return c <= Injected }

// Call is one recorded call.
type Call struct {
	Start, Dur time.Duration // from the recording's start
	Class      Class
	Retry      time.Duration // the cooldown a failure asked for; 0 for none
	Name       int           // index into Recording.Names
	Line       int           // its line in the recording
}

// Recording is a parsed recording.
type Recording struct {
	Version int
	Start   time.Time
	Names   []string // the breakers' names, in the order first seen
	Calls   []Call   // in order of start (stable: line order for a tie)
	// Dropped is what the recording's last line says the recorder dropped;
	// -1 when the recording has no last line (it was cut short).
	Dropped int64
	// CutLine is the number of a last line that has no line break (the
	// process was killed as it wrote it), which Read ignored; 0 for none.
	CutLine int
}

// maxLine bounds a recording's line.
const maxLine = 1 << 20

// Read parses a recording. Errors name the line: "recording:LINE: ...".
// A last line without its line break was cut short as it was written
// (the process died): Read ignores it and says so in CutLine. A
// malformed line anywhere else is an error.
func Read(r io.Reader) (*Recording, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	rec := &Recording{Dropped: -1}
	names := map[string]int{}
	n := 0
	errf := func(format string, args ...any) error {
		return fmt.Errorf("recording:%d: %s", n, fmt.Sprintf(format, args...))
	}
	var long []byte // a line longer than br's buffer, so far
	for {
		part, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if long = append(long, part...); len(long) > maxLine {
				return nil, fmt.Errorf("recording:%d: a line longer than %d bytes", n+1, maxLine)
			}
			continue
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("recording:%d: %w", n+1, err)
		}
		if long != nil {
			part, long = append(long, part...), nil
		}
		if len(part) == 0 { // the end
			break
		}
		n++
		line, whole := strings.CutSuffix(string(part), "\n")
		if !whole && n > 1 {
			rec.CutLine = n // cut short as it was written
			break
		}
		line = strings.TrimSuffix(line, "\r")
		if n == 1 {
			if err := rec.header(line); err != nil {
				return nil, errf("%v", err)
			}
			continue
		}
		if strings.HasPrefix(line, "#") {
			if rest, ok := strings.CutPrefix(line, "# end "); ok {
				for _, f := range strings.Fields(rest) {
					if v, ok := strings.CutPrefix(f, "dropped="); ok {
						d, err := strconv.ParseInt(v, 10, 64)
						if err != nil || d < 0 {
							return nil, errf("bad dropped count %q", v)
						}
						rec.Dropped = d
					}
				}
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		c, name, err := parseLine(line)
		if err != nil {
			return nil, errf("%v", err)
		}
		i, ok := names[name]
		if !ok {
			i = len(rec.Names)
			names[name] = i
			rec.Names = append(rec.Names, name)
		}
		c.Name, c.Line = i, n
		rec.Calls = append(rec.Calls, c)
	}
	if n == 0 {
		return nil, fmt.Errorf("recording: empty: want a first line %q", runtime.RecordingHeader+" v1 start=...")
	}
	slices.SortStableFunc(rec.Calls, func(a, b Call) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	return rec, nil
}

// header parses the first line: "breakergen-recording v1 start=T ...".
func (rec *Recording) header(line string) error {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != runtime.RecordingHeader {
		return fmt.Errorf("not a recording: want a first line %q", runtime.RecordingHeader+" v1 start=...")
	}
	v, err := strconv.Atoi(strings.TrimPrefix(f[1], "v"))
	if err != nil || !strings.HasPrefix(f[1], "v") {
		return fmt.Errorf("bad version %q: want v1", f[1])
	}
	if v != runtime.RecordingVersion {
		return fmt.Errorf("recording format v%d: this breakergen reads v%d", v, runtime.RecordingVersion)
	}
	rec.Version = v
	for _, kv := range f[2:] {
		k, val, _ := strings.Cut(kv, "=")
		switch k {
		case "start":
			if rec.Start, err = time.Parse(time.RFC3339Nano, val); err != nil {
				return fmt.Errorf("bad start %q: want an RFC 3339 time", val)
			}
		case "unit":
			if val != "ns" {
				return fmt.Errorf("unit %q: this breakergen reads ns", val)
			}
		case "sample":
			if val != "1" {
				return fmt.Errorf("sample %q: this breakergen replays only complete recordings (sample=1)", val)
			}
		}
	}
	return nil
}

// parseLine parses "START DUR CLASS[/RETRY] NAME".
func parseLine(line string) (Call, string, error) {
	var c Call
	f := make([]string, 0, 3)
	rest := line
	for range 3 {
		rest = strings.TrimLeft(rest, " ")
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			return c, "", fmt.Errorf("want START DURATION CLASS NAME, got %s", quote(line))
		}
		f = append(f, rest[:i])
		rest = rest[i+1:]
	}
	start, err1 := strconv.ParseInt(f[0], 10, 64)
	dur, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || start < 0 || dur < 0 {
		return c, "", fmt.Errorf("want a start and a duration in ns, got %s %s", quote(f[0]), quote(f[1]))
	}
	if start > math.MaxInt64-dur {
		return c, "", fmt.Errorf("the call ends past the last instant a recording can hold (%d ns after its start), got %s %s", int64(math.MaxInt64), quote(f[0]), quote(f[1]))
	}
	c.Start, c.Dur = time.Duration(start), time.Duration(dur)
	cls, retry, hasRetry := strings.Cut(f[2], "/")
	i := slices.Index(classNames, cls)
	if i < 0 {
		return c, "", fmt.Errorf("unknown class %s; want one of %s", quote(cls), strings.Join(classNames, ", "))
	}
	c.Class = Class(i)
	if hasRetry {
		r, err := strconv.ParseInt(retry, 10, 64)
		if err != nil || r <= 0 || c.Class != Failure {
			return c, "", fmt.Errorf("bad cooldown %s: only a failure carries one, in ns", quote(f[2]))
		}
		c.Retry = time.Duration(r)
	}
	name := rest
	if strings.HasPrefix(name, `"`) {
		var err error
		if name, err = strconv.Unquote(name); err != nil {
			return c, "", fmt.Errorf("bad quoted name %s", quote(rest))
		}
	}
	if name == "" {
		return c, "", fmt.Errorf("no breaker name")
	}
	return c, name, nil
}

// maxQuoted is how much of a malformed line an error echoes.
const maxQuoted = 100

// quote quotes s for an error, cut to its first maxQuoted bytes (on a
// rune boundary) when longer, saying so: a malformed line may be long.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s... (%d bytes in all)", strconv.Quote(s[:n]), len(s))
}

// End returns when the recording's last call ended.
func (rec *Recording) End() time.Duration {
	var end time.Duration
	for _, c := range rec.Calls {
		end = max(end, c.Start+c.Dur)
	}
	return end
}
