package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	nethttp "net/http"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
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
		// The context's errors are plain: context.Canceled an errors.New,
		// DeadlineExceeded of an unexported type that its message names.
		{context.Canceled, "context canceled"},
		{context.DeadlineExceeded, "context deadline exceeded"},
		{fmtErr("try: %w", context.DeadlineExceeded), "try: context deadline exceeded"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, runtime.Brief(tt.err))
	}
	got := runtime.Brief(errors.New(long))
	assert.Equal(t, 160, len([]rune(got)))
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")), "cut on a rune boundary")
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestBriefRedactsHTTPClientError fails a real http.Client call whose URL
// carries credentials in its userinfo and its query string: neither reaches
// the Brief line nor the event reason.
func TestBriefRedactsHTTPClientError(t *testing.T) {
	addr := closedPort(t)
	target := "http://quotes:hunter2@" + addr + "/quote?symbol=600000&token=SECRET#frag-SECRET"
	_, err := (&nethttp.Client{}).Get(target)
	require.Error(t, err)
	var ue *url.Error
	require.ErrorAs(t, err, &ue)
	require.Contains(t, err.Error(), "SECRET", "the raw error carries the secret")

	got := runtime.Brief(err)
	assert.NotContains(t, got, "SECRET")
	assert.NotContains(t, got, "hunter2")
	assert.NotContains(t, got, "quotes:", "the user name is part of the userinfo")
	assert.True(t, strings.HasPrefix(got,
		`url.Error: Get "http://REDACTED@`+addr+`/quote?symbol=REDACTED&token=REDACTED#REDACTED": dial tcp `), got)
	assert.Contains(t, got, "connection refused")

	// The same through a breaker: the reason the endpoints serve.
	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "quotes", FailureThreshold: 1})
	_ = b.Do(context.Background(), func(context.Context) error { return fmt.Errorf("fetch quote: %w", err) })
	require.Equal(t, runtime.Open, b.State())
	reason := reg.Events(1)[0].Reason
	t.Logf("reason: %s", reason)
	assert.NotContains(t, reason, "SECRET")
	assert.NotContains(t, reason, "hunter2")
	assert.Contains(t, reason, "token=REDACTED")
}

// TestBriefRedactsURLErrorWithoutScheme: the URL of a *url.Error is
// redacted even when it has no scheme for the word scan to find.
func TestBriefRedactsURLErrorWithoutScheme(t *testing.T) {
	err := &url.Error{Op: "parse", URL: "quote-api/v1?key=SECRET x", Err: errors.New("invalid character")}
	got := runtime.Brief(fmt.Errorf("build request: %w", err))
	assert.Equal(t, `build request: parse "quote-api/v1?key=REDACTED": invalid character`, got)

	joined := errors.Join(errors.New("first"), &url.Error{Op: "Get", URL: "u:p@h/x", Err: errors.New("boom")})
	assert.Equal(t, `first Get "REDACTED@h/x": boom`, runtime.Brief(joined))
}

func TestBriefRedactsTexts(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"plain query",
			"GET https://api.example.com/quote?symbol=600000&token=SECRET: 403 Forbidden",
			"GET https://api.example.com/quote?symbol=REDACTED&token=REDACTED: 403 Forbidden"},
		{"path only",
			"request /v1/quote?apikey=SECRET failed",
			"request /v1/quote?apikey=REDACTED failed"},
		{"go-redis dial",
			"redis: dial redis://default:SECRET@cache.internal:6379/0: connect: connection refused",
			"redis: dial redis://REDACTED@cache.internal:6379/0: connect: connection refused"},
		{"go-redis options",
			`redis: invalid URL "rediss://:SECRET@cache.internal:6380/0?dial_timeout=3s&password=SECRET"`,
			`redis: invalid URL "rediss://REDACTED@cache.internal:6380/0?dial_timeout=REDACTED&password=REDACTED"`},
		{"gRPC status",
			`rpc error: code = Unauthenticated desc = token rejected by https://auth.example.com/oauth?access_token=SECRET`,
			`rpc error: code = Unauthenticated desc = token rejected by https://auth.example.com/oauth?access_token=REDACTED`},
		{"gRPC dial",
			`rpc error: code = Unavailable desc = connection error: desc = "transport: dial dns:///svc:SECRET@quotes.internal:443?lb=SECRET"`,
			`rpc error: code = Unavailable desc = connection error: desc = "transport: dial dns:///REDACTED@quotes.internal:443?lb=REDACTED"`},
		{"fragment and brackets",
			"see <https://x.example/cb#access_token=SECRET>, (https://x.example/?SECRET).",
			"see <https://x.example/cb#REDACTED>, (https://x.example/?REDACTED)."},
		{"no URL", "what? nothing = here", "what? nothing = here"},
		{"Chinese around a URL", "行情接口 https://行情.example/q?密钥=SECRET 失败",
			"行情接口 https://行情.example/q?密钥=REDACTED 失败"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runtime.Brief(errors.New(tt.text))
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "SECRET")
		})
	}
}

// TestBriefControlCharacters: white space folds to one space; every other
// control character (bidirectional ones included) becomes U+FFFD, so no
// terminal escape gets through.
func TestBriefControlCharacters(t *testing.T) {
	got := runtime.Brief(errors.New("a\x1b[31mred\x07\x00 \t\r\nb\u0085c\u009bd\x7fe\xff"))
	assert.Equal(t, "a\uFFFD[31mred\uFFFD\uFFFD b c\uFFFDd\uFFFDe\uFFFD", got)
	// Bidirectional controls too (CVE-2021-42574): they reorder what a
	// page or a terminal shows. A zero-width space is not one.
	got = runtime.Brief(errors.New("a\u202eb\u2066c\u2069d\u200fe\u061cf\u200bg"))
	assert.Equal(t, "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\u200bg", got)

	reg, _ := newTestRegistry(t)
	b := reg.Breaker(runtime.Config{Name: "ctl", FailureThreshold: 1})
	assert.Panics(t, func() {
		_ = b.Do(context.Background(), func(context.Context) error {
			panic("bell\a esc\x1b]0;title\x07 https://h/?k=SECRET")
		})
	})
	reason := reg.Events(1)[0].Reason
	assert.Equal(t, "panic: bell\uFFFD esc\uFFFD]0;title\uFFFD https://h/?k=REDACTED", reason)
}

// FuzzBrief: whatever the message, Brief gives one line of valid UTF-8,
// at most 160 characters, with no control character.
func FuzzBrief(f *testing.F) {
	for _, s := range []string{"", "a\x1b[0m", "https://u:p@h/?t=s#f", "?=", "://@", "行情\x00", "\xff\xfe", "a\n\tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := runtime.Brief(errors.New(s))
		require.True(t, utf8.ValidString(got), "%q", got)
		require.LessOrEqual(t, utf8.RuneCountInString(got), 160)
		for _, r := range got {
			require.False(t, unicode.IsControl(r), "control %U in %q", r, got)
		}
		require.False(t, strings.HasPrefix(got, " ") || strings.HasSuffix(got, " "), "%q", got)
	})
}
