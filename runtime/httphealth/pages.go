package httphealth

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/breakergen/breakergen/runtime"
)

// PageSize is how many breakers one page of the dashboard, or of a paged
// [PathDatasources] answer, holds.
const PageSize = 50

// maxQuery is the longest search text, in characters (runes), that a
// page accepts: the dashboard's search fields take as many (their
// maxlength counts UTF-16 units, at least one a rune). A name (family,
// source) has no bound of its own: it is matched whole, and the runtime
// takes a name of any length.
const maxQuery = 256

// pageRequest is what a request asks of a page: which page (from 1) of
// the breakers whose name or display name contains query; with family,
// of that family's keys instead.
type pageRequest struct {
	page   int
	query  string
	family string
	paged  bool // page, q or family was given
}

// parsePage reads the page and q parameters: page one whole number >= 1
// (absent: 1; past the last page: the last), q any text of at most
// maxQuery characters, family a name, each given at most once.
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
		if n := utf8.RuneCountInString(vs[0]); n > maxQuery {
			return req, fmt.Errorf("q is %d characters long; give at most %d", n, maxQuery)
		}
		req.query = strings.TrimSpace(vs[0])
	}
	if vs, ok := q["family"]; ok {
		req.paged = true
		switch {
		case len(vs) != 1:
			return req, fmt.Errorf("family given %d times; give it once", len(vs))
		case vs[0] == "":
			return req, errors.New("family is empty; give the name of a family of per-key breakers")
		}
		req.family = vs[0]
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
	// Recording is the registry's [runtime.Health] Recording: the state
	// of its recording of calls; nil when it records none.
	Recording *runtime.RecordingHealth `json:"recording,omitempty"`
	// Family is the family whose keys the page holds (asked for with
	// ?family=NAME); Breakers are then its keys' and every count is over
	// its keys. Left out otherwise.
	Family string `json:"family,omitempty"`
	// Families are the registry's families of per-key breakers whose name
	// or display name contains Query, in name order, on every page of the
	// breakers: each as one row, its keys left out of Breakers, Counts,
	// Total and Matched (each family counts there as one source, at its
	// worst key's level). Left out when there are none, and on a family's
	// page.
	Families []familyRow `json:"families,omitempty"`
	// Injecting names every breaker, on any page, whose settings inject
	// faults or latency (runtime.Config.Fault, Latency; see
	// docs/rehearse.md), in name order; the dashboard shows a "fault
	// injection on" badge while there is one. Left out while empty.
	Injecting []string `json:"injecting,omitempty"`
	// Unmatched is the registry's [runtime.Health] Unmatched, on every
	// page (a family's too): the run-time settings that name no breaker,
	// family or limiter, most often by a typo; the dashboard shows a
	// notice naming them while there is one. Left out while empty.
	Unmatched []string `json:"unmatched_settings,omitempty"`
}

// familyRow is one family of per-key breakers as the dashboard's row of
// it shows it: its [runtime.FamilyHealth] (open is the keys out of
// CLOSED), its keys counted by level, and its worst key's state and level
// (CLOSED and ok with no key).
type familyRow struct {
	runtime.FamilyHealth
	Counts    levelCounts   `json:"counts"`
	State     runtime.State `json:"state"`
	Status    runtime.Level `json:"status"`
	injecting bool          // the family's settings inject faults or latency
}

func injects(c runtime.Config) bool { return c.Fault > 0 || c.Latency > 0 }

// worse orders states by how bad they are for the worst state of a
// family: OPEN, ISOLATED, HALF_OPEN, BYPASSED, CLOSED.
func worse(a, b runtime.State) bool {
	rank := func(s runtime.State) int {
		switch s {
		case runtime.Open:
			return 5
		case runtime.Isolated:
			return 4
		case runtime.HalfOpen:
			return 3
		case runtime.Bypassed:
			return 2
		case runtime.Closed:
			return 0
		}
		return 6 // unknown: shown as down
	}
	return rank(a) > rank(b)
}

// newFamilyRow reads a family's health and its keys' states.
func newFamilyRow(f *runtime.Family) familyRow {
	row := familyRow{FamilyHealth: f.Health(), State: runtime.Closed, injecting: injects(f.Config())}
	for _, b := range f.Breakers() {
		// A key may inject on its own (BREAKER_<FAMILY>/<KEY>_FAULT, or
		// WithConfig by its name): the family's row says so too.
		row.injecting = row.injecting || injects(b.Config())
		s := b.State()
		row.Counts.add(s.Level())
		if worse(s, row.State) {
			row.State = s
		}
	}
	row.Status = row.State.Level()
	return row
}

// add counts one source of level lv; it returns its index in a page's
// byLevel: 0 down, 1 degraded, 2 ok.
func (c *levelCounts) add(lv runtime.Level) int {
	switch lv {
	case runtime.LevelOK:
		c.OK++
		return 2
	case runtime.LevelDegraded:
		c.Degraded++
		return 1
	}
	c.Down++
	return 0
}

// breakerPage builds the page req asks for. The second result is false
// when req names a family the registry does not have.
func (h *Handler) breakerPage(req pageRequest) (breakerPage, bool) {
	reg := h.registry()
	p := breakerPage{Status: runtime.LevelOK, Query: req.query, PerPage: PageSize,
		DroppedEvents: reg.DroppedEvents(), Fleet: reg.Fleet(), Recording: reg.Recording(), Family: req.family, Unmatched: reg.Unmatched()}
	query := strings.ToLower(req.query)
	var all []*runtime.Breaker // name order
	if req.family != "" {
		var fam *runtime.Family
		for _, f := range reg.Families() {
			if f.Name() == req.family {
				fam = f
			}
		}
		if fam == nil {
			return p, false
		}
		all = fam.Breakers()
		if injects(fam.Config()) {
			p.Injecting = []string{fam.Name()}
		} else {
			for _, b := range all {
				if injects(b.Config()) { // a key's own injection
					p.Injecting = append(p.Injecting, b.Name())
				}
			}
		}
	} else {
		all = reg.PlainBreakers() // a family's keys are in its row
		fams := reg.Families()
		keyFamily := "" // the family a query of a key's name names
		for _, f := range fams {
			if len(f.Name()) > len(keyFamily) && h.familyPrefix(f.Name(), query) != "" {
				keyFamily = f.Name()
			}
		}
		for _, f := range fams {
			row := newFamilyRow(f)
			p.Counts.add(row.Status)
			p.Total++
			if row.injecting {
				p.Injecting = append(p.Injecting, row.Name)
			}
			// A key's name, as the timeline shows it, finds its family:
			// the one whose name is the longest prefix of it, as
			// FamilyOf says (not "quote" for "quote/sub/x").
			if query == "" || h.matches(row.Name, query) || row.Name == keyFamily {
				p.Families = append(p.Families, row)
			}
		}
	}
	p.Total += len(all)
	// down, degraded, ok: each keeps the name order.
	var byLevel [3][]*runtime.Breaker
	for _, b := range all {
		if req.family == "" && injects(b.Config()) {
			p.Injecting = append(p.Injecting, b.Name())
		}
		i := p.Counts.add(b.State().Level())
		if query != "" && !h.matchesIn(req.family, b.Name(), query) {
			continue
		}
		byLevel[i] = append(byLevel[i], b)
	}
	slices.Sort(p.Injecting)
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
	return p, true
}

// matchesIn is matches for a breaker of a page of family's keys (family
// "" for the page of breakers and families): a key's search reads the key,
// not "<family>/", which every key's name holds (a search for the
// family's name matched them all), and takes a key's full name as the
// timeline shows it ("quote/k1") for the key. A key's display name is one
// given for its own name alone: displayName falls back to its family's
// ("eastmoney" for "eastmoney_quote/k1"), which every key shares.
func (h *Handler) matchesIn(family, name, query string) bool {
	if family == "" {
		return h.matches(name, query)
	}
	query = strings.TrimPrefix(query, h.familyPrefix(family, query))
	if strings.Contains(strings.ToLower(strings.TrimPrefix(name, family+"/")), query) {
		return true
	}
	dn, ok := h.names[name]
	return ok && strings.Contains(strings.ToLower(dn), query)
}

// familyPrefix returns the start of query, in lower case, that names the
// family (its name or its display name, then "/"), as the timeline shows
// a key ("quote/600519", "行情/600519"); "" when query does not start so.
func (h *Handler) familyPrefix(family, query string) string {
	for _, p := range []string{strings.ToLower(family) + "/", strings.ToLower(h.displayName(family)) + "/"} {
		if strings.HasPrefix(query, p) {
			return p
		}
	}
	return ""
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
