package marketdata

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-3", 0},
		{"2", 2 * time.Second},
		{"120", 2 * time.Minute},
		{"999999999", 24 * time.Hour},
		{"Mon, 30 Nov 2026 08:00:30 GMT", 30 * time.Second},
		{"Mon, 30 Nov 2026 07:59:00 GMT", 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, parseRetryAfter(tt.in, now), "Retry-After: %q", tt.in)
	}
}
