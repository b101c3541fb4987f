package prometheus_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
)

// metricName matches the metric names a query or rule uses.
var metricName = regexp.MustCompile(`\bbreakergen_[a-z_]+\b`)

// alertNames returns the alerts that rules.yml defines.
func alertNames(rules string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s*- alert: (\S+)$`).FindAllStringSubmatch(rules, -1) {
		names = append(names, m[1])
	}
	return names
}

// dashboardQueries returns the PromQL of grafana.json: every target's expr,
// and the series selector of every label_values() variable.
func dashboardQueries(t *testing.T) []string {
	raw, err := os.ReadFile("grafana.json")
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	var queries []string
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			require.NotEmpty(t, tg.Expr, "panel %q", p.Title)
			queries = append(queries, tg.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+), *[a-z_]+\)$`)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		require.NotNil(t, m, "variable query %q", v.Definition)
		queries = append(queries, m[1])
	}
	return queries
}

// exported returns the names of the families the collector exports for a
// registry with a breaker of each kind.
func exported(t *testing.T) map[string]bool {
	_, c := fullRegistry(t)
	r := prom.NewPedanticRegistry()
	require.NoError(t, r.Register(c))
	mfs, err := r.Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	require.Len(t, names, 14, "every family of SPEC §10 and of docs/metrics.md")
	return names
}

func TestDashboardAndRulesUseOnlyExportedMetrics(t *testing.T) {
	names := exported(t)
	used := map[string]bool{}
	for _, q := range dashboardQueries(t) {
		found := metricName.FindAllString(q, -1)
		assert.NotEmpty(t, found, "query %q uses no breakergen metric", q)
		for _, n := range found {
			assert.True(t, names[n], "grafana.json queries %s, which the collector does not export (query %q)", n, q)
			used[n] = true
		}
	}
	assert.ElementsMatch(t, slices.Collect(maps.Keys(names)), slices.Collect(maps.Keys(used)),
		"the dashboard shows every family")

	rules, err := os.ReadFile("rules.yml")
	require.NoError(t, err)
	found := metricName.FindAllString(string(rules), -1)
	assert.NotEmpty(t, found)
	for _, n := range found {
		assert.True(t, names[n], "rules.yml uses %s, which the collector does not export", n)
	}
}

// TestDashboardQueriesParse has promtool parse every dashboard query, with
// Grafana's variables given values, as recording rules.
func TestDashboardQueriesParse(t *testing.T) {
	vars := strings.NewReplacer("$__rate_interval", "1m", "$job", ".*", "$breaker", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range dashboardQueries(t) {
		fmt.Fprintf(&b, "      - record: dashboard:query%d\n        expr: %q\n", i, vars.Replace(q))
	}
	path := filepath.Join(t.TempDir(), "queries.yml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	out, ok := promtool(t, nil, "check", "rules", path)
	assert.True(t, ok, "%s\n%s", out, b.String())
}

// TestDashboardStatePanelNamesEveryState: the board's state timeline
// draws every state a breaker can be in, the operator's ISOLATED and
// BYPASSED (SPEC §14) included: each state's series has a weight of its
// own, and the weight maps to the state's name.
func TestDashboardStatePanelNamesEveryState(t *testing.T) {
	type panel struct {
		Type    string `json:"type"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		FieldConfig struct {
			Defaults struct {
				Mappings []struct {
					Options map[string]struct {
						Text string `json:"text"`
					} `json:"options"`
				} `json:"mappings"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
	}
	raw, err := os.ReadFile("grafana.json")
	require.NoError(t, err)
	var dash struct {
		Panels []panel `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	i := slices.IndexFunc(dash.Panels, func(p panel) bool { return p.Type == "state-timeline" })
	require.GreaterOrEqual(t, i, 0, "a state timeline")
	p := dash.Panels[i]
	require.Len(t, p.Targets, 1)
	require.Len(t, p.FieldConfig.Defaults.Mappings, 1)
	names := map[string]string{} // weight -> state name
	for w, o := range p.FieldConfig.Defaults.Mappings[0].Options {
		names[w] = o.Text
	}
	// The states' series, each times its weight, joined with or: a mode's
	// series exists only while a breaker is in it (SPEC §10 keeps three
	// series a breaker), and a sum would be empty without it.
	drawn := map[string]string{} // label -> the name its weight maps to
	term := regexp.MustCompile(`(\d+) \* breakergen_breaker_state\{[^}]*state="([a-z_]+)"\}`)
	expr := p.Targets[0].Expr
	require.True(t, strings.HasPrefix(expr, "max by (breaker) ("), expr)
	for _, m := range term.FindAllStringSubmatch(expr, -1) {
		drawn[m[2]] = names[m[1]]
	}
	assert.Equal(t, 4, strings.Count(expr, " or "), "the five states' series joined with or: %s", expr)
	want := map[string]string{}
	for _, s := range []runtime.State{runtime.Closed, runtime.HalfOpen, runtime.Open, runtime.Isolated, runtime.Bypassed} {
		want[strings.ToLower(s.String())] = s.String()
	}
	assert.Equal(t, want, drawn)
}
