package httphealth

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/breakergen/breakergen/runtime"
)

// PageSize is how many breakers one page of the dashboard, or of a paged
// [PathDatasources] answer, holds.
const PageSize = 50

// maxQuery is the longest search text, in bytes, that a page accepts.
const maxQuery = 256

// pageRequest is what a request asks of a page: which page (from 1) of
// the breakers whose name or display name contains query.
type pageRequest struct {
	page  int
	query string
	paged bool // page or q was given
}

// parsePage reads the page and q parameters: page one whole number >= 1
// (absent: 1; past the last page: the last), q any text of at most
// maxQuery bytes, each given at most once.
func parsePage(q url.Values) (pageRequest, error) {
	req := pageRequest{page: 1}
	if _, ok := q["page"]; ok {
		req.paged = true
		n, err := parsePageNumber(q)
		if err != nil {
			return req, err
		}
		req.page = n
	}
	if vs, ok := q["q"]; ok {
		req.paged = true
		if len(vs) != 1 {
			return req, fmt.Errorf("q given %d times; give it once", len(vs))
		}
		if len(vs[0]) > maxQuery {
			return req, fmt.Errorf("q is %d bytes long; give at most %d", len(vs[0]), maxQuery)
		}
		req.query = strings.TrimSpace(vs[0])
	}
	return req, nil
}

// parsePageNumber reads the page parameter: absent, 1; else one whole
// number >= 1, given once (a huge one is clamped, not refused).
func parsePageNumber(q url.Values) (int, error) {
	vs, ok := q["page"]
	if !ok {
		return 1, nil
	}
	if len(vs) != 1 {
		return 0, fmt.Errorf("page given %d times; give it once", len(vs))
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range: n is clamped
		return 0, fmt.Errorf("page %q is not a whole number", vs[0])
	}
	if n < 1 {
		return 0, fmt.Errorf("page %q is not 1 or more", vs[0])
	}
	return n, nil
}

// levelCounts counts a registry's breakers by level.
type levelCounts struct {
	OK       int `json:"ok"`
	Degraded int `json:"degraded"`
	Down     int `json:"down"`
}

// breakerPage is one page of a registry's breakers, those that are not ok
// first: what the dashboard shows and a paged [PathDatasources] answer
// holds. It reads every breaker's state, but the counters of one page's
// breakers only, so that its cost hardly grows with the registry.
type breakerPage struct {
	// Status is the worst level of any breaker, as in [runtime.Health].
	Status runtime.Level `json:"status"`
	// Breakers are the page's, down first, then degraded, then ok, each
	// level in name order.
	Breakers []runtime.Stats `json:"breakers"`
	// Counts and Total are over every breaker; Matched over those that
	// contain Query.
	Counts  levelCounts `json:"counts"`
	Total   int         `json:"total"`
	Query   string      `json:"q"`
	Matched int         `json:"matched"`
	// Page is the page shown, from 1; Pages how many there are (at least 1).
	Page    int `json:"page"`
	Pages   int `json:"pages"`
	PerPage int `json:"per_page"`
	// DroppedEvents is the registry's [runtime.Health] DroppedEvents: the
	// transitions not logged nor hooked because the event queue was full.
	DroppedEvents uint64 `json:"dropped_events,omitempty"`
	// Fleet is the registry's [runtime.Health] Fleet: whether the state it
	// shares with other processes is live; nil without a fleet.
	Fleet *runtime.FleetHealth `json:"fleet,omitempty"`
	// Injecting names every breaker, on any page, whose settings inject
	// faults or latency (runtime.Config.Fault, Latency; see
	// docs/rehearse.md), in name order; the dashboard shows a "fault
	// injection on" badge while there is one. Left out while empty.
	Injecting []string `json:"injecting,omitempty"`
}

// breakerPage builds the page req asks for.
func (h *Handler) breakerPage(req pageRequest) breakerPage {
	all := h.registry().Breakers() // name order
	p := breakerPage{Status: runtime.LevelOK, Total: len(all), Query: req.query, PerPage: PageSize,
		DroppedEvents: h.registry().DroppedEvents(), Fleet: h.registry().Fleet()}
	query := strings.ToLower(req.query)
	// down, degraded, ok: each keeps the name order.
	var byLevel [3][]*runtime.Breaker
	for _, b := range all {
		if c := b.Config(); c.Fault > 0 || c.Latency > 0 {
			p.Injecting = append(p.Injecting, b.Name())
		}
		lv := b.State().Level()
		i := 2
		switch lv {
		case runtime.LevelOK:
			p.Counts.OK++
		case runtime.LevelDegraded:
			p.Counts.Degraded++
			i = 1
		default:
			p.Counts.Down++
			i = 0
		}
		if query != "" && !h.matches(b.Name(), query) {
			continue
		}
		byLevel[i] = append(byLevel[i], b)
	}
	switch {
	case p.Counts.Down > 0:
		p.Status = runtime.LevelDown
	case p.Counts.Degraded > 0:
		p.Status = runtime.LevelDegraded
	}
	p.Matched = len(byLevel[0]) + len(byLevel[1]) + len(byLevel[2])
	p.Pages = max(1, (p.Matched+PageSize-1)/PageSize)
	p.Page = min(req.page, p.Pages)
	skip := (p.Page - 1) * PageSize
	p.Breakers = make([]runtime.Stats, 0, min(PageSize, p.Matched-skip))
	for _, level := range byLevel {
		if skip >= len(level) {
			skip -= len(level)
			continue
		}
		for _, b := range level[skip:] {
			if len(p.Breakers) == PageSize {
				break
			}
			p.Breakers = append(p.Breakers, b.Stats())
		}
		skip = 0
	}
	return p
}

// matches reports whether the breaker called name, or its display name,
// contains query, which is in lower case.
func (h *Handler) matches(name, query string) bool {
	return strings.Contains(strings.ToLower(name), query) ||
		strings.Contains(strings.ToLower(h.displayName(name)), query)
}

// injectingText is the words of the dashboard's "fault injection on"
// badge for the breakers names: "" when there are none.
func injectingText(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "Fault injection on: " + strings.Join(names, ", ")
}
