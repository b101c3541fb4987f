package sim

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// WriteText writes the report's table: one row per result, in the order
// given.
func WriteText(w io.Writer, rec *Recording, outage int, results []Result) error {
	dropped := "the recorder dropped none"
	switch {
	case rec.Dropped < 0:
		dropped = "no end line: the recording was cut short"
	case rec.Dropped > 0:
		dropped = fmt.Sprintf("the recorder dropped %d calls: the replay lacks them", rec.Dropped)
	}
	if rec.CutLine > 0 {
		dropped += fmt.Sprintf("; its last line (%d) was cut mid-write and is ignored", rec.CutLine)
	}
	breakers := "breakers"
	if len(rec.Names) == 1 {
		breakers = "breaker"
	}
	fmt.Fprintf(w, "recording: %d calls of %d %s over %s from %s; %s\n", len(rec.Calls), len(rec.Names), breakers,
		round(rec.End()), rec.Start.UTC().Format(time.RFC3339), dropped)
	fmt.Fprintf(w, "outage: a run of at least %d calls in a row that failed upstream; to trip: its calls until the trip, the tripping call included\n\n", outage)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "breaker\tsetting\tcalls\ttrips\trefused\topen\toutages\tto trip\tfirst trip")
	for _, r := range results {
		keys := r.Candidate.Keys
		if keys == "" {
			keys = "(defaults)"
		}
		reason := r.FirstReason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%d\t%s\t%s\n", r.Candidate.Name, keys, r.Calls, r.Trips, r.Refused,
			round(r.Open), len(r.ToTrip), toTripText(r.ToTrip), reason)
	}
	return tw.Flush()
}

// round rounds d to the millisecond for the report, a d under one to the
// microsecond.
func round(d time.Duration) string {
	if d > 0 && d < time.Millisecond {
		return d.Round(time.Microsecond).String() // a recording of a few fast calls: not "0s"
	}
	return d.Round(time.Millisecond).String()
}

// toTripText lists the calls to trip of each outage ("none": no trip,
// "open": not CLOSED when it began), or past six outages the median,
// least and most among those that tripped, how many did not ("N not")
// and how many began while the breaker was not CLOSED ("N open": they
// were protected, not missed).
func toTripText(v []int) string {
	if len(v) == 0 {
		return "-"
	}
	word := func(n int) string {
		switch n {
		case -1:
			return "none"
		case 0:
			return "open"
		}
		return itoa(n)
	}
	if len(v) <= 6 {
		out := make([]string, len(v))
		for i, n := range v {
			out[i] = word(n)
		}
		return strings.Join(out, ",")
	}
	var tripped []int
	not, open := 0, 0
	for _, n := range v {
		switch {
		case n > 0:
			tripped = append(tripped, n)
		case n == 0:
			open++
		default:
			not++
		}
	}
	if not == len(v) {
		return "none"
	}
	var parts []string
	if len(tripped) > 0 {
		slices.Sort(tripped)
		parts = append(parts, fmt.Sprintf("median %d (%d–%d)", tripped[len(tripped)/2], tripped[0], tripped[len(tripped)-1]))
	}
	if not > 0 {
		parts = append(parts, fmt.Sprintf("%d not", not))
	}
	if open > 0 {
		parts = append(parts, fmt.Sprintf("%d open", open))
	}
	return strings.Join(parts, ", ")
}

// The bands follow the dashboard's state band (templates/dashboard.html,
// drawn there by the page's script, so not shared code): its colours, and
// a height that tells the state without colour, out of 12: CLOSED low,
// HALF_OPEN two thirds, OPEN and ISOLATED full, BYPASSED 10.
var (
	stateColors = map[runtime.State]string{
		runtime.Closed: "#1a7f37", runtime.Open: "#b42318", runtime.HalfOpen: "#7d4e00",
		runtime.Isolated: "#57606a", runtime.Bypassed: "#0b57d0",
	}
	stateHeights = map[runtime.State]float64{
		runtime.Closed: 4, runtime.HalfOpen: 8, runtime.Open: 12, runtime.Isolated: 12, runtime.Bypassed: 10,
	}
)

// WriteHTML writes a self-contained page with each result's state band
// over the recording's time: one SVG, no script, no external resource.
func WriteHTML(w io.Writer, rec *Recording, results []Result) error {
	const width, rowH, labelW = 900.0, 28.0, 0.0
	end := rec.End()
	if end <= 0 {
		end = 1
	}
	x := func(d time.Duration) float64 { return float64(d) / float64(end) * width }
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>breakergen sim</title>\n")
	p("<style>body{font:14px system-ui,sans-serif;margin:2em}h2{font-size:15px;margin:1.2em 0 .3em}.k{display:inline-block;width:1em;height:1em;vertical-align:middle;margin:0 .3em 0 1em}</style></head><body>\n")
	p("<h1>breakergen sim</h1>\n<p>%d calls of %d breakers over %s, from %s. Each band is a candidate setting's state over the recording's time.",
		len(rec.Calls), len(rec.Names), html.EscapeString(round(rec.End())), rec.Start.UTC().Format(time.RFC3339))
	for _, s := range []runtime.State{runtime.Closed, runtime.Open, runtime.HalfOpen} {
		p("<span class=\"k\" style=\"background:%s\"></span>%s", stateColors[s], s)
	}
	p("</p>\n")
	for _, r := range results {
		keys := r.Candidate.Keys
		if keys == "" {
			keys = "(defaults)"
		}
		trips := "trips"
		if r.Trips == 1 {
			trips = "trip"
		}
		p("<h2>%s · %s</h2>\n<p>%d %s, %d of %d calls refused, OPEN %s</p>\n", html.EscapeString(r.Candidate.Name), html.EscapeString(keys),
			r.Trips, trips, r.Refused, r.Calls, html.EscapeString(round(r.Open)))
		p("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"state over time\">\n", width+labelW, rowH+16)
		for i, band := range r.Bands {
			to := end
			if i+1 < len(r.Bands) {
				to = r.Bands[i+1].At
			}
			if to <= band.At && i+1 < len(r.Bands) {
				continue
			}
			h := rowH * stateHeights[band.State] / 12
			p("<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>%s from %s to %s</title></rect>\n",
				labelW+x(band.At), rowH-h, max(x(to)-x(band.At), 3), h, stateColors[band.State], band.State,
				html.EscapeString(round(band.At)), html.EscapeString(round(to))) // a flip of an instant still shows, 3 px wide
		}
		p("<text x=\"0\" y=\"%.0f\" font-size=\"11\">0</text><text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
			rowH+13, width, rowH+13, html.EscapeString(round(end)))
		p("</svg>\n")
	}
	p("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
