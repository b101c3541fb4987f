package ifacegen

import (
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
