package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/breakergen/breakergen/runtime"
)

// liveLog prints the demo's lines with times relative to the start. The
// state-change hook prints from whichever goroutine made the transition (a
// call's, or a timer's), so every write takes the lock.
type liveLog struct {
	mu      sync.Mutex // guards w and printed
	w       io.Writer
	printed map[runtime.Event]bool // the transitions printed so far
	start   time.Time
}

func (l *liveLog) now() time.Time { return time.Now() }

func (l *liveLog) stamp(t time.Time) string {
	return fmt.Sprintf("%8s", fmt.Sprintf("+%.3fs", t.Sub(l.start).Seconds()))
}

func (l *liveLog) plain(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// note is a remark of the narrator, aligned with the rows' provider column.
func (l *liveLog) note(format string, args ...any) {
	l.plain("  %8s  · %s\n", "", fmt.Sprintf(format, args...))
}

// row is one call: who, what, the verdict and the detail.
func (l *liveLog) row(provider, what, verdict, detail string) {
	line := fmt.Sprintf("  %s  %-10s %s %-8s %s", l.stamp(time.Now()), provider, pad(what, 24), verdict, detail)
	l.plain("%s\n", strings.TrimRight(line, " "))
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

// transition is one state change, as the hook sees it.
func (l *liveLog) transition(ev runtime.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "  %s  ▶ breaker[%s] %s → %s: %s\n", l.stamp(ev.Time), ev.Source, ev.From, ev.To, ev.Reason)
	if l.printed == nil {
		l.printed = map[runtime.Event]bool{}
	}
	l.printed[ev] = true
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

// health prints the registry's health as JSON.
func (s *Scenario) health() error {
	b, err := json.MarshalIndent(s.reg.Health(), "", "  ")
	if err != nil {
		return err
	}
	s.log.plain("\nhealth (reg.Health)\n%s\n", b)
	return nil
}
