package labelvalue

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"tdx", "tdx"},
		{"users/café", "users/café"},
		{"bad\uFFFD", "bad\uFFFD"},
		{"bad\xff", "bad\uFFFD"},
		{"bad\xff\xfe", "bad\uFFFD"}, // a run is one U+FFFD
		{"\xe9t\xe9", "\uFFFDt\uFFFD"},
		{"caf\xc3", "caf\uFFFD"}, // a rune cut short
	} {
		assert.Equal(t, tc.want, Of(tc.in), "%q", tc.in)
	}
}

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   [][]string
		want [][]string
		keep []bool
	}{
		{"valid names as they are", [][]string{{"a"}, {"b"}}, [][]string{{"a"}, {"b"}}, []bool{true, true}},
		{"the first of two cleaned alike", [][]string{{"x\xfe"}, {"x\xff"}}, [][]string{{"x\uFFFD"}, {"x\uFFFD"}}, []bool{true, false}},
		{"the valid name before a cleaned one given first",
			[][]string{{"x\xc0"}, {"x\uFFFD"}}, [][]string{{"x\uFFFD"}, {"x\uFFFD"}}, []bool{false, true}},
		{"every value of a series",
			[][]string{{"s\xff", "fallback"}, {"s\xfe", "hedged"}, {"s\xfe", "fallback"}},
			[][]string{{"s\uFFFD", "fallback"}, {"s\uFFFD", "hedged"}, {"s\uFFFD", "fallback"}},
			[]bool{true, true, false}},
		{"values are not joined ambiguously",
			[][]string{{"a", "bc"}, {"ab", "c"}}, [][]string{{"a", "bc"}, {"ab", "c"}}, []bool{true, true}},
		{"none", nil, nil, []bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep := Clean(tc.in)
			assert.Equal(t, tc.want, tc.in)
			assert.Equal(t, tc.keep, keep)
		})
	}
}
