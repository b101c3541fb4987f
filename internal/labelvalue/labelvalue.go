// Package labelvalue makes the names the exporters report (breakers',
// families', chain sources') valid UTF-8, the same way for package
// exporters/prometheus and exporters/otel (SPEC §10).
//
// A name need not be valid UTF-8: a family's key is part of its breaker's
// name, and a key is often a request's header value. client_golang
// refuses such a label value, and a registry then fails the whole scrape;
// an OTLP exporter fails to marshal the whole batch. So each run of
// invalid bytes becomes U+FFFD, and a valid name is kept byte for byte.
package labelvalue

import "strings"

// Of returns s as a label or attribute value: s itself when it is valid
// UTF-8, else s with each run of invalid bytes replaced by U+FFFD.
func Of(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// Clean makes the values of each series in sets valid UTF-8 (see [Of]),
// in place, and reports which series to report: a series whose values
// are those of one already kept is left out, since a Prometheus registry
// fails the whole scrape over two series with the same labels, and the
// OpenTelemetry SDK, given one attribute set twice in a callback, keeps a
// gauge's last value and adds a counter's: neither is one breaker's. The
// series whose values needed no cleaning are kept first, then the others
// in order, so that a name of the program's own (a breaker, a family, a
// fallback) is never displaced by a key a request chose that cleans to
// it; given in the same order (the registry's is by name), the same
// series is kept every time.
func Clean(sets [][]string) (keep []bool) {
	keep = make([]bool, len(sets))
	seen := make(map[string]bool, len(sets))
	claim := func(i int) {
		k := strings.Join(sets[i], "\xff") // never in a valid value
		keep[i] = !seen[k]
		seen[k] = true
	}
	var dirty []int
	for i, set := range sets {
		clean := true
		for j, v := range set {
			if set[j] = Of(v); set[j] != v {
				clean = false
			}
		}
		if clean {
			claim(i)
		} else {
			dirty = append(dirty, i)
		}
	}
	for _, i := range dirty {
		claim(i)
	}
	return keep
}
