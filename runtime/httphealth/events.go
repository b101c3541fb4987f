package httphealth

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// MoreEventsHeader is the header, set to "true", of a [PathEvents] answer
// that was cut at its limit: the log holds more events that match, older
// ones, on the next page. The dashboard's state band reads it to ask for
// the next page, and to tell "nothing happened before" from "not shown".
const MoreEventsHeader = "X-More-Events"

// maxSources is how many source parameters one [PathEvents] request may
// give: one page of the dashboard.
const maxSources = PageSize

// eventFilter is which events a [PathEvents] request asks for: those of
// the given sources (any when none), at or after since (any when zero),
// limit of them from page (from 1).
type eventFilter struct {
	since   time.Time
	sources map[string]bool
	limit   int
	page    int
}

// skip is how many matching events come before the page.
func (f eventFilter) skip() int {
	if f.page-1 > math.MaxInt/f.limit {
		return math.MaxInt
	}
	return (f.page - 1) * f.limit
}

func (f eventFilter) any() bool { return !f.since.IsZero() || f.sources != nil }

func (f eventFilter) match(ev runtime.Event) bool {
	return (f.sources == nil || f.sources[ev.Source]) && !ev.Time.Before(f.since)
}

// parseEventFilter reads the since, source and page parameters: since
// once, an RFC 3339 time; source a breaker's name, given once per
// breaker, at most maxSources times, none empty (a name of any length, as
// the runtime takes); page as
// for the dashboard. limit is the answer's size, already read.
func parseEventFilter(q url.Values, limit int) (eventFilter, error) {
	f := eventFilter{limit: limit}
	page, err := parsePageNumber(q)
	if err != nil {
		return f, err
	}
	f.page = page
	if vs, ok := q["since"]; ok {
		if len(vs) != 1 {
			return f, fmt.Errorf("since given %d times; give it once", len(vs))
		}
		t, err := time.Parse(time.RFC3339, vs[0])
		if err != nil {
			return f, fmt.Errorf("since %q is not an RFC 3339 time such as 2026-10-06T09:30:00Z", vs[0])
		}
		f.since = t
	}
	if vs, ok := q["source"]; ok {
		if len(vs) > maxSources {
			return f, fmt.Errorf("source given %d times; give at most %d", len(vs), maxSources)
		}
		f.sources = make(map[string]bool, len(vs))
		for _, v := range vs {
			if v == "" {
				return f, errors.New("source is empty; give a breaker's name")
			}
			f.sources[v] = true
		}
	}
	return f, nil
}

// events returns the page of events of the log that f asks for, newest
// first, and whether older ones match too. A page is counted from the
// newest event when the request is served: events recorded between two
// requests move the pages, so a client that follows them may see an event
// twice, never miss one the log still holds. since or source read the
// whole log, whose capacity the registry's owner chose
// ([runtime.WithEventCapacity]).
func (h *Handler) events(f eventFilter) ([]runtime.Event, bool) {
	skip := f.skip()
	if !f.any() {
		evs := h.registry().Events(min(skip, math.MaxInt-f.limit-1) + f.limit + 1)
		evs = evs[min(skip, len(evs)):]
		if len(evs) > f.limit {
			return evs[:f.limit], true
		}
		return evs, false
	}
	all := h.registry().Events(math.MaxInt)
	out := all[:0] // filtered in place: all is a copy of the log
	for _, ev := range all {
		if !f.match(ev) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(out) == f.limit {
			return out, true
		}
		out = append(out, ev)
	}
	return out, false
}
