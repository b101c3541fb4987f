package httphealth

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDisplayName(t *testing.T) {
	h := New(nil,
		WithDisplayName("eastmoney", "东方财富"),
		WithDisplayName("tencent", "腾讯行情"),
		WithDisplayName("fallback:sina", "新浪 (fallback)"),
		WithDisplayName("sina", "新浪"),
	)
	for source, want := range map[string]string{
		"eastmoney":              "东方财富",
		"fallback:eastmoney":     "东方财富",
		"fallback:tencent_kline": "腾讯行情",
		"tencent_kline":          "腾讯行情",
		"fallback:sina":          "新浪 (fallback)", // its own name wins
		"a:b:sina":               "新浪",
		"tdx":                    "tdx",
		"fallback:tdx_kline":     "tdx_kline",
		"_tencent":               "_tencent",
		"fallback:":              "",
		"":                       "",
		// A family's key: the family's display name with the key, which
		// the family's name alone hid ("东方财富" for every key).
		"eastmoney/600519":       "东方财富/600519",
		"eastmoney_quote/600519": "东方财富/600519",
		"eastmoney/a/b":          "东方财富/a/b",
		"tdx/600519":             "tdx/600519",
		"hosts/":                 "hosts/",
	} {
		assert.Equal(t, want, h.displayName(source), source)
	}
	// Each "/" is looked at once: a key that is a path of 40 segments,
	// whose every prefix was looked up again for each of its own, took
	// seconds a name (1.3 s at 25), on every page and every refresh.
	deep := "paths" + strings.Repeat("/seg", 40)
	done := make(chan string, 1)
	go func() { done <- h.displayName(deep) }()
	select {
	case got := <-done:
		assert.Equal(t, deep, got)
	case <-time.After(time.Minute): // a bound on a hang, not a timing
		t.Fatal("displayName of a name of 40 segments did not return")
	}
}

func TestFormatLeft(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Hour:                        "due now",
		0:                                 "due now",
		time.Nanosecond:                   "in 1 s",
		time.Second:                       "in 1 s",
		30 * time.Second:                  "in 30 s",
		59*time.Second + time.Millisecond: "in 1 min 0 s",
		90 * time.Second:                  "in 1 min 30 s",
		time.Hour:                         "in 1 h 0 min",
		2*time.Hour + 5*time.Minute + 59*time.Second: "in 2 h 5 min",
	} {
		assert.Equal(t, want, formatLeft(d), d.String())
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Second:        "5 s",
		2 * time.Minute:        "2 min",
		90 * time.Second:       "90 s",
		250 * time.Millisecond: "250 ms",
	} {
		assert.Equal(t, want, formatDuration(d), d.String())
	}
}

func TestFormatTimestamp(t *testing.T) {
	ts := time.Date(2026, 10, 6, 17, 30, 0, 999999999, time.FixedZone("CST", 8*3600))
	assert.Equal(t, "2026-10-06T09:30:00Z", formatTimestamp(ts))
	assert.Equal(t, "2026-10-06 09:30:00 UTC", formatTime(ts))
	assert.Equal(t, "—", formatTime(time.Time{}))
}
