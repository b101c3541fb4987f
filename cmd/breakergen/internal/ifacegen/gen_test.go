package ifacegen

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenerate: every seed yields gofmt-clean source (Generate formats
// it, and fails on anything that does not parse), and the same seed the
// same files.
func TestGenerate(t *testing.T) {
	for seed := range uint64(20) {
		p, err := Generate("example.com/x", seed, Options{})
		require.NoError(t, err, "seed %d", seed)
		require.NotEmpty(t, p.Interfaces, "seed %d", seed)
		require.Contains(t, p.Files, p.Dir+"/a.go")
		require.Contains(t, p.Files, p.Dir+"/fz_test.go")
		again, err := Generate("example.com/x", seed, Options{})
		require.NoError(t, err)
		assert.Equal(t, p, again, "seed %d", seed)
	}
}

// TestChainFlag: with the chain flag, some interfaces carry it, and only
// their tests call a chain.
func TestChainFlag(t *testing.T) {
	flagged := 0
	for seed := range uint64(20) {
		p, err := Generate("example.com/x", seed, Options{Chains: ChainsFlag})
		require.NoError(t, err)
		src := string(p.Files[p.Dir+"/fz_test.go"])
		for _, data := range p.Files {
			flagged += strings.Count(string(data), " chain\n") + strings.Count(string(data), " chain ")
		}
		chains := strings.Count(src, "Chain(rec, fzRegistry())") + strings.Count(src, "Chain[")
		if chains > 0 {
			assert.Positive(t, flagged, "seed %d", seed)
		}
	}
	assert.Positive(t, flagged)
}

// TestTypeText: the shapes whose text is easy to get wrong.
func TestTypeText(t *testing.T) {
	g := &gen{}
	g.local = &pkg{"example.com/x/s1", "s1"}
	f := g.newFile(g.local, true, nil, nil)
	i := basicT{"int"}
	for _, c := range []struct {
		want string
		typ  typ
	}{
		{"chan (<-chan int)", chanT{both, chanT{recvOnly, i}}},
		{"<-chan <-chan int", chanT{recvOnly, chanT{recvOnly, i}}},
		{"chan<- chan int", chanT{sendOnly, chanT{both, i}}},
		{"func(int, ...any) error", funcT{params: []typ{i, sliceT{namedT{d: stdAny}}}, results: []typ{namedT{d: stdError}}, variadic: true}},
		{"func() (int, int)", funcT{results: []typ{i, i}}},
		{"map[string][]*fztime.Time", mapT{basicT{"string"}, sliceT{ptrT{namedT{d: stdTime}}}}},
		{"fzos.DirEntry", namedT{d: stdOSDirEntry}},
		{"*fztemplate.Template", ptrT{namedT{d: stdTText}}},
		{"interface{ fzio.Reader; Len() int }", litT{true}},
		{"*fztemplate2.Template", ptrT{namedT{d: stdTHTML}}},
	} {
		assert.Equal(t, c.want, f.ts(c.typ))
	}
}

// judgedCounts counts, over the packages of seeds, the guarded methods of
// the annotated interfaces' method sets that have each form of a judged
// method (SPEC §6 and §12), and the forms around them.
func judgedCounts(seeds uint64) map[string]int {
	n := map[string]int{}
	for seed := range seeds {
		g := newGen("example.com/x", seed, Options{Chains: ChainsFlag})
		g.build("example.com/x")
		judgedSeed := false
		for _, in := range g.annotated {
			for _, m := range in.methodSet(nil) {
				if !g.routed(in, m) {
					continue
				}
				c := g.carrierOf(m.ft.results[len(m.ft.results)-1])
				failure := g.effective(in, m, "failure") != ""
				judged := g.judged(in, m)
				if judged {
					judgedSeed = true
					n["judged"]++
				}
				switch {
				case c == nil:
				case c == stdRow:
					n["carrier *sql.Row"]++
				case c.pkg == g.dep:
					n["carrier of the other package"]++
				case c.tparams != nil:
					n["generic carrier"]++
				default:
					n["local carrier"]++
				}
				add := func(cond bool, k string) {
					if cond {
						n[k]++
					}
				}
				add(failure && c == nil, "failure= on an error result")
				add(failure && c != nil, "failure= on a carrier")
				add(judged && g.effective(in, m, "valid") != "", "judged, valid=")
				add(judged && g.effective(in, m, "stale") != "", "judged, stale=")
				add(judged && g.retries(in, m), "judged, attempts>1 or budget")
				add(judged && g.effective(in, m, "backoff") != "", "judged, backoff=")
				add(judged && !g.retries(in, m), "judged, one try")
				add(judged && g.chains(in), "judged, chain flag")
				add(judged && !g.chains(in), "judged, no chain")
				add(judged && len(in.tparams) > 0, "judged, generic interface")
				add(judged && slices.ContainsFunc(m.ft.results, isResponse), "judged, an *http.Response result")
				add(judged && !(len(m.ft.params) > 0 && isContext(m.ft.params[0])), "judged, no ctx")
				add(judged && len(m.ft.params) == 1 && isRequest(m.ft.params[0]), "judged, the ctx of an *http.Request")
				add(!judged && g.judges(in, m), "not judged, valid=")
				add(!judged && g.effective(in, m, "stale") != "", "not judged, stale=")
				if own := in.own(m.name); own != nil && judged {
					for _, key := range []string{"failure", "valid", "stale"} {
						v, _ := own.line.get(key)
						add(v == "-" || v == "0", "judged, inherited key cleared")
						v, _ = in.lineFor(m.name).get(key)
						add(v != "" && v != "-" && v != "0" && g.effective(in, m, key) != "", "judged, key from the interface line")
					}
				}
				for _, p := range m.pnames {
					add(judged && slices.ContainsFunc(g.funcs, func(f *judgeFunc) bool { return f.name == p }), "judged, a parameter named like a valid or failure func")
					add(judged && p == g.dep.name, "judged, a parameter named like the other package")
				}
			}
		}
		if judgedSeed {
			n["seeds with a judged method"]++
		}
	}
	return n
}

func isResponse(t typ) bool { return isPtrTo(t, stdResponse) }
func isRequest(t typ) bool  { return isPtrTo(t, stdRequest) }

func isPtrTo(t typ, d *named) bool {
	p, ok := t.(ptrT)
	if !ok {
		return false
	}
	n, ok := p.elem.(namedT)
	return ok && n.d == d
}

// TestJudged: over 200 seeds, every form of a judged method the generator
// accepts comes up (the counts are in go test -v's log).
func TestJudged(t *testing.T) {
	n := judgedCounts(200)
	keys := slices.Sorted(maps.Keys(n))
	for _, k := range keys {
		t.Logf("%5d  %s", n[k], k)
	}
	for _, k := range []string{
		"local carrier", "generic carrier", "carrier of the other package", "carrier *sql.Row",
		"failure= on an error result", "failure= on a carrier", "judged, valid=", "judged, stale=",
		"judged, attempts>1 or budget", "judged, backoff=", "judged, one try", "judged, chain flag", "judged, no chain",
		"judged, generic interface", "judged, an *http.Response result", "judged, the ctx of an *http.Request",
		"judged, no ctx", "judged, inherited key cleared", "judged, key from the interface line",
		"judged, a parameter named like a valid or failure func", "judged, a parameter named like the other package",
		"not judged, valid=", "not judged, stale=",
	} {
		assert.Positive(t, n[k], k)
	}
	assert.Greater(t, n["seeds with a judged method"], 100)
}

// TestJudgeFuncsWritten: every valid and failure func a route names is
// declared in its interface's file, and the forwarding test checks that
// some are called.
func TestJudgeFuncsWritten(t *testing.T) {
	checks := 0
	for seed := range uint64(30) {
		g := newGen("example.com/x", seed, Options{Chains: ChainsFlag})
		g.build("example.com/x")
		p, err := g.write()
		require.NoError(t, err, "seed %d", seed)
		for _, f := range g.funcs {
			src := string(p.Files[p.Dir+"/"+[]string{"a.go", "b.go", "c_test.go"}[f.file]])
			assert.Contains(t, src, "\nfunc "+f.name+"(", "seed %d", seed)
		}
		checks += strings.Count(string(p.Files[p.Dir+"/fz_test.go"]), "if fzJudged == fzJ {")
	}
	assert.Positive(t, checks)
}
