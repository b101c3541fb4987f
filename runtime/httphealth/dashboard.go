package httphealth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/templates"
)

// dashboardLimit is how many events the dashboard shows.
const dashboardLimit = 50

// bandSpan is how far back each breaker's state band goes; bandPages
// how many pages of events the page asks for at most at each refresh to
// draw the bands; chartPoints how many refreshes its chart of calls,
// failures and refusals shows.
const (
	bandSpan    = time.Hour
	bandPages   = 5
	chartPoints = 60
)

// stateText is how the dashboard shows a state: in words and with a
// symbol, never by colour alone.
type stateText struct {
	Word   string        `json:"word"`
	Symbol string        `json:"symbol"`
	Level  runtime.Level `json:"level"`
}

var states = map[runtime.State]stateText{
	runtime.Closed:   {Word: "Closed (ok)", Symbol: "✓", Level: runtime.LevelOK},
	runtime.HalfOpen: {Word: "Half-open (degraded)", Symbol: "◐", Level: runtime.LevelDegraded},
	runtime.Open:     {Word: "Open (down)", Symbol: "✕", Level: runtime.LevelDown},
	runtime.Isolated: {Word: "Isolated by an operator (down)", Symbol: "⊘", Level: runtime.LevelDown},
	runtime.Bypassed: {Word: "Bypassed by an operator (degraded)", Symbol: "⇉", Level: runtime.LevelDegraded},
}

func textOf(s runtime.State) stateText {
	if t, ok := states[s]; ok {
		return t
	}
	return stateText{Word: s.String(), Symbol: "?", Level: runtime.LevelDown}
}

// levelText is how the dashboard shows the overall level.
type levelText struct {
	Word   string `json:"word"`
	Symbol string `json:"symbol"`
}

var levels = map[runtime.Level]levelText{
	runtime.LevelOK:       {Word: "All sources ok", Symbol: "✓"},
	runtime.LevelDegraded: {Word: "Degraded: a source is probing", Symbol: "◐"},
	runtime.LevelDown:     {Word: "Down: a source is cut off", Symbol: "✕"},
}

// The page and its parts, as the template sees them.
type (
	pageView struct {
		Title       string
		Status      levelView
		Updated     string
		UpdatedISO  string
		RefreshText string
		Summary     string
		Injecting   string // the "fault injection on" badge's words; "" when off
		Unmatched   string // the names of the unmatched-settings notice; "" when none
		Fleet       fleetView
		Pager       pagerView
		EmptyText   string
		Cards       []cardView
		Families    []familyView
		Events      []eventView
		BlankCard   cardView
		BlankFamily familyView
		BlankKey    keyView
		BlankEvent  eventView
		Config      scriptConfig
		CSS         template.CSS
		Script      template.JS
	}
	// fleetView is the fleet line, Health's Fleet as the script shows it;
	// all "" (the line hidden) without a fleet.
	fleetView struct {
		Level  runtime.Level
		Symbol string
		Word   string
	}
	pagerView struct {
		Show        bool // more than one page, or a search
		Query       string
		Text        string
		First, Last bool
	}
	levelView struct {
		Level  runtime.Level
		Word   string
		Symbol string
	}
	stateView struct {
		Key    string // data-f prefix: "state", "from" or "to"
		State  string
		Word   string
		Symbol string
		Level  runtime.Level
	}
	cardView struct {
		Name      string
		Display   string
		ShowName  bool
		State     stateView
		NextProbe string // RFC 3339, empty unless OPEN
		Rows      []rowView
		Controls  bool // WithControl: the reason field and the buttons
	}
	// familyView is one family of per-key breakers: a row that the page's
	// script expands into its keys, a page at a time.
	familyView struct {
		Name     string
		Display  string
		ShowName bool
		State    stateView
		Rows     []rowView
		Controls bool // WithControl: a reason field for its keys, and a column of their buttons
	}
	// keyView is a row of a family's table of keys, which the page's
	// script fills in.
	keyView struct {
		State    stateView
		Controls bool // WithControl: the key's buttons
	}
	rowView struct {
		Key    string
		Label  string
		Value  string
		Hidden bool
	}
	eventView struct {
		ISO        string
		When       string
		Source     string
		Display    string
		ShowSource bool
		From, To   stateView
		Reason     string
	}
	// scriptConfig is what the page's script needs, as JSON.
	scriptConfig struct {
		Title     string `json:"title"`
		RefreshMS int64  `json:"refresh_ms"`
		Limit     int    `json:"limit"`
		Page      int    `json:"page"`
		Query     string `json:"q"`
		// BandMS is how far back the state bands go; BandLimit the
		// events asked for them in one answer, and BandPages in how many
		// answers at most; ChartPoints how many refreshes a chart shows.
		BandMS      int64                       `json:"band_ms"`
		BandLimit   int                         `json:"band_limit"`
		BandPages   int                         `json:"band_pages"`
		ChartPoints int                         `json:"chart_points"`
		Names       map[string]string           `json:"names"`
		Controls    bool                        `json:"controls"`
		States      map[string]stateText        `json:"states"`
		Levels      map[runtime.Level]levelText `json:"levels"`
	}
)

func newStateView(key string, s runtime.State) stateView {
	t := textOf(s)
	return stateView{Key: key, State: s.String(), Word: t.Word, Symbol: t.Symbol, Level: t.Level}
}

// The dashboard's template, inlined style and script, and the
// Content-Security-Policy that allows exactly those two inline blocks and
// requests to the page's own origin.
var (
	dashboardTmpl = template.Must(template.ParseFS(templates.FS, "dashboard.html"))
	dashboardCSS  = mustRead("dashboard.css")
	dashboardJS   = mustRead("dashboard.js")
	dashboardCSP  = "default-src 'none'; " +
		"script-src " + cspHash(dashboardJS) + "; " +
		"style-src " + cspHash(dashboardCSS) + "; " +
		"connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

func mustRead(name string) string {
	b, err := templates.FS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func (h *Handler) serveDashboard(w http.ResponseWriter, r *http.Request, q url.Values) {
	req, err := parsePage(q)
	if err != nil {
		h.writeError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	req.family = "" // the page shows every family; its script expands them
	body, err := h.rendered(req)
	if err != nil {
		h.writeError(w, r, http.StatusInternalServerError, "rendering the dashboard: "+err.Error())
		return
	}
	w.Header().Set("Content-Security-Policy", dashboardCSP)
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.write(w, r, http.StatusOK, "text/html; charset=utf-8", body)
}

// renderCacheSize is how many views of the dashboard (a page and a search)
// a Handler keeps rendered.
const renderCacheSize = 16

// renderCache keeps rendered views of the dashboard for one refresh
// interval. Its zero value is empty and ready.
type renderCache struct {
	mu    sync.Mutex // guards views; held while rendering, so that each view renders once for every client
	views map[pageRequest]renderedView
}

type renderedView struct {
	body  []byte // read-only once stored
	until time.Time
}

// rendered returns the dashboard's view req, rendered at most once per
// refresh interval for every client: the page says when it was rendered,
// and its script brings it up to date from the JSON endpoints at once.
func (h *Handler) rendered(req pageRequest) ([]byte, error) {
	c := &h.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	now := h.now()
	if v, ok := c.views[req]; ok && now.Before(v.until) {
		return v.body, nil
	}
	var buf bytes.Buffer
	bp, _ := h.breakerPage(req) // no family asked for: always found
	if err := dashboardTmpl.Execute(&buf, h.page(bp, h.registry().Events(dashboardLimit))); err != nil {
		return nil, err
	}
	if c.views == nil {
		c.views = make(map[pageRequest]renderedView, renderCacheSize)
	}
	if len(c.views) >= renderCacheSize {
		for k, v := range c.views {
			if !now.Before(v.until) {
				delete(c.views, k)
			}
		}
		if len(c.views) >= renderCacheSize {
			clear(c.views)
		}
	}
	c.views[req] = renderedView{body: buf.Bytes(), until: now.Add(h.refresh())}
	return buf.Bytes(), nil
}

// page builds the dashboard's view of one page of breakers and the events.
func (h *Handler) page(health breakerPage, evs []runtime.Event) pageView {
	now := h.now()
	lv, ok := levels[health.Status]
	if !ok {
		lv = levels[runtime.LevelDown]
	}
	p := pageView{
		Title:       h.pageTitle(),
		Status:      levelView{Level: health.Status, Word: lv.Word, Symbol: lv.Symbol},
		Updated:     formatTime(now),
		UpdatedISO:  formatTimestamp(now),
		RefreshText: formatDuration(h.refresh()),
		Summary:     summaryText(health),
		Injecting:   injectingText(health.Injecting),
		Unmatched:   strings.Join(health.Unmatched, ", "),
		Fleet:       fleetText(health.Fleet),
		Pager: pagerView{
			Show:  health.Pages > 1 || health.Query != "",
			Query: health.Query,
			Text:  pageText(health),
			First: health.Page == 1,
			Last:  health.Page == health.Pages,
		},
		EmptyText:   emptyText(health),
		BlankCard:   h.card(runtime.Stats{}, now),
		BlankFamily: h.family(familyRow{State: runtime.Closed}),
		BlankKey:    keyView{State: newStateView("state", runtime.Closed), Controls: h.ctl != nil},
		BlankEvent:  eventView{From: newStateView("from", runtime.Closed), To: newStateView("to", runtime.Closed)},
		CSS:         template.CSS(dashboardCSS),
		Script:      template.JS(dashboardJS),
		Config: scriptConfig{
			Title:       h.pageTitle(),
			RefreshMS:   h.refresh().Milliseconds(),
			Limit:       dashboardLimit,
			BandMS:      bandSpan.Milliseconds(),
			BandLimit:   h.maxLimit(),
			BandPages:   bandPages,
			ChartPoints: chartPoints,
			Page:        health.Page,
			Query:       health.Query,
			Names:       h.names,
			Controls:    h.ctl != nil,
			States:      map[string]stateText{},
			Levels:      levels,
		},
	}
	for s, t := range states {
		p.Config.States[s.String()] = t
	}
	for _, b := range health.Breakers {
		p.Cards = append(p.Cards, h.card(b, now))
	}
	for _, f := range health.Families {
		p.Families = append(p.Families, h.family(f))
	}
	for _, ev := range evs {
		display := h.displayName(ev.Source)
		p.Events = append(p.Events, eventView{
			ISO:        formatTimestamp(ev.Time),
			When:       formatTime(ev.Time),
			Source:     ev.Source,
			Display:    display,
			ShowSource: display != ev.Source,
			From:       newStateView("from", ev.From),
			To:         newStateView("to", ev.To),
			Reason:     ev.Reason,
		})
	}
	return p
}

// summaryText counts the breakers by level, and the transitions the event
// queue dropped, for people; the page's script has a copy.
// fleetText is the fleet line of fl, the script's renderFleet in Go:
// Redis up or down, the members, and a warning while another member uses
// this process's origin (each then drops the other's news as its own).
func fleetText(fl *runtime.FleetHealth) fleetView {
	if fl == nil {
		return fleetView{}
	}
	up := fl.Redis == "ok"
	v := fleetView{Level: runtime.LevelOK, Symbol: "✓"}
	switch {
	case !up:
		v.Level, v.Symbol = runtime.LevelDown, "✕"
	case fl.DuplicateOrigin != "":
		v.Level, v.Symbol = runtime.LevelDegraded, "⚠"
	}
	var b strings.Builder
	b.WriteString("Fleet: Redis ")
	if up {
		b.WriteString("ok")
	} else {
		b.WriteString("down")
	}
	// While Redis has been away for longer than a member's two seconds,
	// members is 0: no count is known, so none is shown.
	switch {
	case !up && fl.Members == 0:
	case fl.Members == 1:
		b.WriteString(", 1 member")
	default:
		b.WriteString(", " + strconv.Itoa(fl.Members) + " members")
	}
	if !up {
		b.WriteString("; each process on its own breakers")
	}
	if fl.DuplicateOrigin != "" {
		b.WriteString("; another member is also " + fl.DuplicateOrigin +
			": neither follows the other's trips (give each its own WithOrigin)")
	}
	v.Word = b.String()
	return v
}

func summaryText(p breakerPage) string {
	if p.Total == 0 {
		return ""
	}
	s := plural(p.Total, "source", "sources") + ": " + countsText(p.Counts) + ". Those not ok come first."
	if p.DroppedEvents > 0 {
		s += " " + strconv.FormatUint(p.DroppedEvents, 10) + " events not logged nor hooked (event queue full)."
	}
	return s
}

// pageText says which breakers the page shows; the page's script has a
// copy.
func pageText(p breakerPage) string {
	s := "Page " + strconv.Itoa(p.Page) + " of " + strconv.Itoa(p.Pages)
	if n := len(p.Breakers); n > 0 {
		from := (p.Page-1)*p.PerPage + 1
		s += ": " + strconv.Itoa(from) + "–" + strconv.Itoa(from+n-1) + " of " + strconv.Itoa(p.Matched)
	}
	if p.Query != "" {
		s += " matching “" + p.Query + "”"
	}
	return s + "."
}

// emptyText is what the page says when it shows no breaker.
func emptyText(p breakerPage) string {
	if p.Total == 0 {
		return "No breakers registered yet."
	}
	return "No source matches “" + p.Query + "”."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// card builds one breaker's card. The rows and their keys are the ones the
// page's script fills in.
func (h *Handler) card(b runtime.Stats, now time.Time) cardView {
	display := h.displayName(b.Name)
	c := cardView{Name: b.Name, Display: display, ShowName: display != b.Name, State: newStateView("state", b.State),
		Controls: h.ctl != nil}
	next := "none (closed)"
	switch b.State {
	case runtime.Open:
		next = "due now"
		if !b.NextProbe.IsZero() {
			next = formatLeft(b.NextProbe.Sub(now))
			c.NextProbe = formatTimestamp(b.NextProbe)
		}
	case runtime.HalfOpen:
		next = "probing now"
	case runtime.Isolated:
		next = "none (isolated until resumed)"
	case runtime.Bypassed:
		next = "none (bypassed until resumed)"
	}
	half := b.State == runtime.HalfOpen
	c.Rows = []rowView{
		{Key: "next", Label: "Next probe", Value: next},
		{Key: "consecutive", Label: "Consecutive failures", Value: itoa(b.ConsecutiveFailures)},
		{Key: "failures", Label: "Failures", Value: utoa(b.Failures)},
		{Key: "probe_successes", Label: "Probe successes", Value: itoa(b.ConsecutiveSuccesses), Hidden: !half},
		{Key: "probes", Label: "Probes in flight", Value: itoa(b.ProbesInFlight), Hidden: !half},
		{Key: "changes", Label: "State changes", Value: utoa(b.StateChanges)},
		{Key: "calls", Label: "Calls", Value: utoa(b.Calls), Hidden: !b.Counted},
		{Key: "successes", Label: "Successes", Value: utoa(b.Successes), Hidden: !b.Counted},
		{Key: "rejections", Label: "Rejections", Value: utoa(b.Rejections)},
		{Key: "ignored", Label: "Ignored", Value: utoa(b.Ignored)},
		{Key: "rate_limited", Label: "Rate-limited", Value: utoa(b.RateLimited)},
	}
	c.Rows = append(c.Rows, loadRows(b)...)
	c.Rows = append(c.Rows, []rowView{
		{Key: "opened", Label: "Opened at", Value: formatTime(b.OpenedAt), Hidden: b.State != runtime.Open && b.State != runtime.HalfOpen},
		{Key: "last_failure", Label: "Last failure", Value: formatTime(b.LastFailure)},
	}...)
	return c
}

// family builds one family's row. The rows and their keys are the ones
// the page's script fills in.
func (h *Handler) family(f familyRow) familyView {
	display := h.displayName(f.Name)
	open := itoa(f.Open)
	if f.MaxOpen > 0 {
		open += " (maxopen " + itoa(f.MaxOpen) + "%)"
	}
	return familyView{Name: f.Name, Display: display, ShowName: display != f.Name, State: newStateView("state", f.State), Controls: h.ctl != nil,
		Rows: []rowView{
			{Key: "keys", Label: "Keys live", Value: itoa(f.Keys) + " of " + itoa(f.Limit)},
			{Key: "levels", Label: "Keys by level", Value: countsText(f.Counts)},
			{Key: "open", Label: "Keys OPEN or HALF_OPEN", Value: open}, // maxopen's count: an ISOLATED key is the operator's
			{Key: "dropped", Label: "Dropped (bound)", Value: utoa(f.Dropped)},
			{Key: "kept_closed", Label: "Kept CLOSED (maxopen)", Value: utoa(f.KeptShut), Hidden: f.MaxOpen == 0 && f.KeptShut == 0},
		}}
}

// countsText says how many sources are at each level: "1 down, 0
// degraded, 999 ok". The page's script has a copy.
func countsText(c levelCounts) string {
	return itoa(c.Down) + " down, " + itoa(c.Degraded) + " degraded, " + itoa(c.OK) + " ok"
}

// loadRows are the rows of the figures of SPEC §8 and §9, each shown only
// when the breaker has what it counts: a window, a concurrency limit or
// an in-flight count, a throttle. The page's script has a copy.
func loadRows(b runtime.Stats) []rowView {
	window := b.Window != ""
	return []rowView{
		{Key: "window", Label: "Window", Value: b.Window, Hidden: !window},
		{Key: "window_calls", Label: "Calls in window", Value: windowText(b), Hidden: !window},
		{Key: "failure_rate", Label: "Failure rate", Value: rateText(b.FailureRate, b.FailureRateThreshold),
			Hidden: !window || b.FailureRateThreshold == 0},
		{Key: "slow_rate", Label: "Slow-call rate", Value: rateText(b.SlowRate, b.SlowRateThreshold),
			Hidden: !window || b.SlowRateThreshold == 0},
		{Key: "in_flight", Label: "In flight", Value: inFlightText(b), Hidden: b.InFlight == 0 && b.Concurrency == 0},
		{Key: "bulkhead_full", Label: "Bulkhead full", Value: utoa(b.BulkheadFull), Hidden: b.BulkheadFull == 0},
		{Key: "throttle", Label: "Throttle refuses", Value: percent(b.ThrottleProbability) + " of calls",
			Hidden: b.Throttle == 0 && b.ThrottleProbability == 0 && b.Throttled == 0},
		{Key: "throttled", Label: "Throttled", Value: utoa(b.Throttled), Hidden: b.Throttled == 0},
	}
}

// windowText says what the window holds: "40 (12 failed, 3 slow)".
func windowText(b runtime.Stats) string {
	return itoa(b.WindowCalls) + " (" + itoa(b.WindowFailures) + " failed, " + itoa(b.WindowSlow) + " slow)"
}

// rateText puts a rate beside the threshold at which it trips the
// breaker: "62% (trips at 50%)".
func rateText(rate, threshold float64) string {
	return percent(rate) + " (trips at " + percent(threshold) + ")"
}

// inFlightText puts the calls in flight against the concurrency limit:
// "3 of 10", or "3" without a limit.
func inFlightText(b runtime.Stats) string {
	if b.Concurrency > 0 {
		return itoa(b.InFlight) + " of " + itoa(b.Concurrency)
	}
	return itoa(b.InFlight)
}

// percent formats a fraction 0..1 as a whole percentage; the page's
// script has a copy.
func percent(f float64) string {
	if math.IsNaN(f) {
		return "—"
	}
	return strconv.FormatFloat(math.Round(f*100), 'f', 0, 64) + "%"
}

func itoa(n int) string    { return strconv.Itoa(n) }
func utoa(n uint64) string { return strconv.FormatUint(n, 10) }

// displayName is the name the dashboard shows for the breaker called
// source: see [WithDisplayName]. The page's script has a copy.
func (h *Handler) displayName(source string) string {
	if d, ok := h.names[source]; ok {
		return d
	}
	// A family's key, "<family>/<key>": the family's display name with
	// the key, so that the key shows (the rules of ownDisplayName would
	// hide it behind the family's). The longest such prefix that has a
	// display name wins; each is looked at once.
	for i := strings.LastIndexByte(source, '/'); i > 0; i = strings.LastIndexByte(source[:i], '/') {
		if d, ok := h.ownDisplayName(source[:i]); ok {
			return d + "/" + source[i+1:]
		}
	}
	if d, ok := h.ownDisplayName(source); ok {
		return d
	}
	return source[strings.LastIndexByte(source, ':')+1:]
}

// ownDisplayName is the display name [WithDisplayName] gives source by
// its own rules: its name, after any "prefix:", or before its first "_";
// false when none gives one.
func (h *Handler) ownDisplayName(source string) (string, bool) {
	if d, ok := h.names[source]; ok {
		return d, true
	}
	base := source[strings.LastIndexByte(source, ':')+1:]
	if d, ok := h.names[base]; ok {
		return d, true
	}
	if i := strings.IndexByte(base, '_'); i > 0 {
		if d, ok := h.names[base[:i]]; ok {
			return d, true
		}
	}
	return "", false
}

// formatTime formats t for people, in UTC at second precision; "—" for
// the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// formatLeft says how long until something happens, in whole seconds
// rounded up. The page's script has a copy.
func formatLeft(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	switch {
	case s <= 0:
		return "due now"
	case s < 60:
		return "in " + strconv.FormatInt(s, 10) + " s"
	case s < 3600:
		return "in " + strconv.FormatInt(s/60, 10) + " min " + strconv.FormatInt(s%60, 10) + " s"
	}
	return "in " + strconv.FormatInt(s/3600, 10) + " h " + strconv.FormatInt(s%3600/60, 10) + " min"
}

// formatDuration formats a refresh interval: "5 s", "500 ms", "2 min".
func formatDuration(d time.Duration) string {
	switch {
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + " min"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + " s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
}
