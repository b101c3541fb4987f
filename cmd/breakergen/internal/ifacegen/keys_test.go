package ifacegen

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// keyCounts counts, over the packages of seeds, the lines and the routed
// methods of the annotated interfaces' method sets that have each form
// of key= (SPEC §15) and hedge= (SPEC §9).
func keyCounts(seeds uint64) map[string]int {
	n := map[string]int{}
	add := func(cond bool, k string) {
		if cond {
			n[k]++
		}
	}
	for seed := range seeds {
		g := newGen("example.com/x", seed, Options{Chains: ChainsFlag})
		g.build("example.com/x")
		keyedSeed, hedgedSeed := false, false
		for _, in := range g.annotated {
			for _, l := range in.lines {
				v, _ := l.get("key")
				add(v != "", "key= on an interface line")
				_, ok := l.get("hedge")
				add(ok, "hedge= on an interface line")
			}
			for _, m := range in.methods {
				v, _ := m.line.get("key")
				add(v != "" && v != "-", "key= on a method line")
				add(v == "-", "key=- on a method line")
				_, ok := m.line.get("hedge")
				add(ok, "hedge= on a method line")
			}
			for _, m := range in.methodSet(nil) {
				if !g.routed(in, m) {
					continue
				}
				judged := g.judged(in, m)
				if i, kind := g.keyOf(in, m); i >= 0 {
					keyedSeed = true
					n["keyed"]++
					n["keyed, a key of kind "+kind]++
					t := m.ft.params[i]
					_, named := t.(namedT)
					add(named && kind != "stringer", "keyed, a named type of a string or integer kind")
					_, tp := t.(tparamT)
					add(tp, "keyed, a type parameter")
					add(g.chains(in), "keyed, chain")
					add(judged, "keyed, judged")
					add(g.judges(in, m), "keyed, valid= or failure=")
					add(g.effective(in, m, "stale") != "", "keyed, stale=")
					add(g.carrierOf(m.ft.results[len(m.ft.results)-1]) != nil, "keyed, a carrier")
					add(g.retries(in, m), "keyed, attempts>1 or budget")
					add(len(in.tparams) > 0, "keyed, generic interface")
					add(g.chains(in) && g.effective(in, m, "hedge") != "" && hedgeable(m), "keyed, hedged")
					fam := g.keyFams[in.routeName(m.name)]
					trip := fam != nil && fam.threshold > 0 && errLast(m) && !g.retries(in, m) && g.effective(in, m, "stale") == ""
					add(trip, "keyed, trip test")
					add(trip && fam.maxopen > 0, "keyed, trip test with maxopen=")
					add(g.effective(in, m, "keys") != "", "keyed, keys=")
					add(g.effective(in, m, "maxopen") != "", "keyed, maxopen=")
					add(!slices.Contains(keyParamNames[:6], m.pnames[i]), "keyed, a parameter named like the wrapper's locals or imports")
				}
				if !g.chains(in) || g.effective(in, m, "hedge") == "" {
					continue
				}
				if !hedgeable(m) {
					add(true, "hedge reaches a method without ctx (a warning)")
					continue
				}
				hedgedSeed = true
				n["hedged"]++
				held := slices.ContainsFunc(m.ft.results, isResponseT) || g.isRow(m)
				add(judged, "hedged, judged")
				add(g.carrierOf(m.ft.results[len(m.ft.results)-1]) != nil && !g.isRow(m), "hedged, a carrier with Err and SetErr")
				add(slices.ContainsFunc(m.ft.results, isResponseT), "hedged, an *http.Response result")
				add(g.isRow(m), "hedged, a *sql.Row result")
				add(slices.ContainsFunc(m.ft.params, isRequestT), "hedged, an *http.Request parameter")
				add(held && g.effective(in, m, "valid") == "", "hedged, a held answer (RaceArgsWith)")
				add(held && g.effective(in, m, "valid") != "", "hedged, a held answer with valid= (RaceArgsValidWith)")
				add(g.effective(in, m, "valid") != "", "hedged, valid=")
				add(g.retries(in, m), "hedged, attempts>1 or budget")
				add(g.effective(in, m, "hedges") != "", "hedged, hedges=")
			}
		}
		add(keyedSeed, "seeds with a keyed method")
		add(hedgedSeed, "seeds with a hedged method")
	}
	return n
}

// TestKeysAndHedges: over 200 seeds, every form of key= and hedge= the
// fuzzer draws comes up (the counts are in go test -v's log).
func TestKeysAndHedges(t *testing.T) {
	n := keyCounts(200)
	for _, k := range slices.Sorted(maps.Keys(n)) {
		t.Logf("%5d  %s", n[k], k)
	}
	for _, k := range []string{
		"key= on an interface line", "key= on a method line", "key=- on a method line",
		"keyed, a key of kind string", "keyed, a key of kind int", "keyed, a key of kind uint", "keyed, a key of kind stringer",
		"keyed, a named type of a string or integer kind", "keyed, a type parameter",
		"keyed, chain", "keyed, judged", "keyed, valid= or failure=", "keyed, stale=", "keyed, a carrier",
		"keyed, attempts>1 or budget", "keyed, generic interface", "keyed, hedged",
		"keyed, trip test", "keyed, trip test with maxopen=", "keyed, keys=", "keyed, maxopen=",
		"keyed, a parameter named like the wrapper's locals or imports",
		"hedge= on an interface line", "hedge= on a method line",
		"hedged, judged", "hedged, a carrier with Err and SetErr", "hedged, an *http.Response result", "hedged, a *sql.Row result",
		"hedged, a held answer (RaceArgsWith)", "hedged, a held answer with valid= (RaceArgsValidWith)",
		"hedged, valid=", "hedged, attempts>1 or budget", "hedged, hedges=",
		"hedged, an *http.Request parameter", "hedge reaches a method without ctx (a warning)",
	} {
		assert.Positive(t, n[k], k)
	}
	assert.Greater(t, n["seeds with a keyed method"], 40)
	assert.Greater(t, n["seeds with a hedged method"], 40)
}
