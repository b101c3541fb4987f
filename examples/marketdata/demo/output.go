package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/breakergen/breakergen/runtime"
)

// liveLog prints the demo's lines with times relative to the start. The
// state-change hook prints from whichever goroutine made the transition (a
// call's, or a timer's), so every write takes the lock.
//
// A transition a call caused (every one but OPEN → HALF_OPEN, which the
// reset's end makes) is held until the call's row is printed, and printed
// after it: the hook runs while the call returns, before its row.
type liveLog struct {
	mu      sync.Mutex // guards w, printed, held, seen and glossed
	w       io.Writer
	printed map[runtime.Event]bool // the transitions printed so far
	held    []runtime.Event        // transitions waiting for their call's row
	seen    map[runtime.Event]bool // the transitions the hook gave, printed or held
	glossed map[string]bool        // the sample values glossed so far
	start   time.Time
}

func (l *liveLog) now() time.Time { return time.Now() }

func (l *liveLog) stamp(t time.Time) string {
	return fmt.Sprintf("%8s", fmt.Sprintf("+%.3fs", t.Sub(l.start).Seconds()))
}

// plain prints a line, then the transitions held for it.
func (l *liveLog) plain(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
	l.flushLocked()
}

// flush prints the transitions held so far.
func (l *liveLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *liveLog) flushLocked() {
	for _, ev := range l.held {
		l.printLocked(ev)
	}
	l.held = l.held[:0]
}

// note is a remark of the narrator, aligned with the rows' provider column.
func (l *liveLog) note(format string, args ...any) {
	l.plain("  %8s  · %s\n", "", fmt.Sprintf(format, args...))
}

// row is one call: who, what, the verdict and the detail.
func (l *liveLog) row(provider, what, verdict, detail string) {
	l.mu.Lock()
	what, detail = l.glossLocked(what), l.glossLocked(detail)
	l.mu.Unlock()
	line := fmt.Sprintf("  %s  %-10s %s %-8s %s", l.stamp(time.Now()), provider, pad(what, 24), verdict, detail)
	l.plain("%s\n", strings.TrimRight(line, " "))
}

// glosses are the English of the Chinese sample values (the fake's data,
// from the seed), each given once, after its first use.
var glosses = []struct{ zh, en string }{ // the longest first, where one holds another
	{"贵州茅台", "Kweichow Moutai"},
	{"平安银行", "Ping An Bank"},
	{"工商银行", "ICBC"},
	{"宁德时代", "CATL"},
	{"五粮液", "Wuliangye"},
	{"大笔卖出", "large sell order"},
	{"大笔买入", "large buy order"},
	{"5分钟涨幅", "5-minute rise"},
	{"银行", "banks"},
	{"白酒", "baijiu"},
	{"电池", "batteries"},
	{"亿", "×100 million yuan"},
	{"万", "×10,000 yuan"},
}

// glossLocked adds the English after the first use of each sample value
// in line not glossed before.
func (l *liveLog) glossLocked(line string) string {
	if l.glossed == nil {
		l.glossed = map[string]bool{}
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		matched := false
		for _, g := range glosses {
			if !strings.HasPrefix(line[i:], g.zh) {
				continue
			}
			b.WriteString(g.zh)
			i += len(g.zh)
			if !l.glossed[g.zh] {
				l.glossed[g.zh] = true
				end := i // after a quote or a number's unit, not inside
				if end < len(line) && line[end] == '"' {
					b.WriteByte('"')
					i++
				}
				b.WriteString(" (" + g.en + ")")
			}
			matched = true
			break
		}
		if !matched {
			b.WriteByte(line[i])
			i++
		}
	}
	return b.String()
}

// pad pads s with spaces to n terminal columns, counting CJK characters
// as two.
func pad(s string, n int) string {
	w := 0
	for _, r := range s {
		w++
		if unicode.Is(unicode.Han, r) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xff60) {
			w++
		}
	}
	if w >= n {
		return s + " "
	}
	return s + strings.Repeat(" ", n-w+1)
}

// transition is one state change, as the hook sees it: printed now when
// the reset's end made it, else held for the row of the call that caused it.
func (l *liveLog) transition(ev runtime.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[runtime.Event]bool{}
	}
	l.seen[ev] = true
	if ev.From == runtime.Open && ev.To == runtime.HalfOpen {
		l.flushLocked()
		l.printLocked(ev)
		return
	}
	l.held = append(l.held, ev)
}

func (l *liveLog) printLocked(ev runtime.Event) {
	fmt.Fprintf(l.w, "  %s  ▶ breaker[%s] %s → %s: %s\n", l.stamp(ev.Time), ev.Source, ev.From, ev.To, ev.Reason)
	if l.printed == nil {
		l.printed = map[runtime.Event]bool{}
	}
	l.printed[ev] = true
}

// unseen returns the first of evs that the hook has not given yet.
func (l *liveLog) unseen(evs []runtime.Event) (runtime.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range evs {
		if !l.seen[ev] {
			return ev, true
		}
	}
	return runtime.Event{}, false
}

// unprinted returns the first of evs not printed yet.
func (l *liveLog) unprinted(evs []runtime.Event) (runtime.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range evs {
		if !l.printed[ev] {
			return ev, true
		}
	}
	return runtime.Event{}, false
}

// timeline prints the degradation log, oldest first.
func (s *Scenario) timeline() {
	evs := s.reg.Events(0)
	slices.Reverse(evs)
	s.log.plain("\ndegradation timeline (reg.Events, oldest first)\n")
	for _, ev := range evs {
		s.log.plain("  %s  %-10s %-9s → %-9s  %s\n", s.log.stamp(ev.Time), ev.Source, ev.From, ev.To, ev.Reason)
	}
}

// jsonTime matches a time of the Health JSON (RFC 3339, quoted).
var jsonTime = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)

// health prints the registry's health as JSON, its times as offsets from
// the start like every other line of the demo (the endpoint's JSON has
// RFC 3339 times; docs/health.md says what each field means).
func (s *Scenario) health() error {
	b, err := json.MarshalIndent(s.reg.Health(), "", "  ")
	if err != nil {
		return err
	}
	b = jsonTime.ReplaceAllFunc(b, func(q []byte) []byte {
		t, err := time.Parse(time.RFC3339Nano, string(q[1:len(q)-1]))
		if err != nil {
			return q
		}
		return []byte(strconv.Quote(strings.TrimSpace(s.log.stamp(t))))
	})
	s.log.plain("\nhealth (reg.Health, times as offsets from the start; fields: docs/health.md)\n%s\n", b)
	return nil
}
