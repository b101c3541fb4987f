package runtime_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/breakergen/breakergen/runtime"
	"github.com/stretchr/testify/assert"
)

type statusError struct{ code int }

func http(code int) string { return map[int]string{502: "502 Bad Gateway"}[code] }

type emptyError struct{}

func TestBrief(t *testing.T) {
	long := strings.Repeat("行情", 200)
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("connection refused"), "connection refused"},
		{fmtErr("dial %s: %w", "quote.example", errors.New("refused")), "dial quote.example: refused"},
		{&statusError{502}, "runtime_test.statusError: upstream answered 502 Bad Gateway"},
		{emptyError{}, "runtime_test.emptyError"},
		{errors.New("line one\n\tline  two "), "line one line two"},
		{errors.Join(errors.New("a"), errors.New("b")), "a b"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, runtime.Brief(tt.err))
	}
	got := runtime.Brief(errors.New(long))
	assert.Equal(t, 160, len([]rune(got)))
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")), "cut on a rune boundary")
}
