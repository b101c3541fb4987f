package setting

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWindow(t *testing.T) {
	for _, c := range []struct {
		in     string
		calls  int
		period time.Duration
	}{
		{"10", 10, 0},
		{"100", 100, 0},
		{" 100 ", 100, 0},
		{"1s", 0, time.Second},
		{"1m", 0, time.Minute},
		{"1m30s", 0, 90 * time.Second},
	} {
		n, d, err := Window(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.calls, n, c.in)
		assert.Equal(t, c.period, d, c.in)
	}
	for in, want := range map[string]string{
		"9":     "at least 10 calls",
		"0":     "at least 10 calls",
		"-5":    "at least 10 calls",
		"999ms": "at least 1s",
		"-1m":   "at least 1s",
		"":      "like 100 or 1m",
		"1.5":   "like 100 or 1m",
		"lots":  "like 100 or 1m",
	} {
		_, _, err := Window(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

func TestPercent(t *testing.T) {
	for in, want := range map[string]float64{"1%": 0.01, "50%": 0.5, "100%": 1, "2.5%": 0.025, " 10% ": 0.1} {
		for _, fraction := range []bool{false, true} {
			f, err := Percent(in, fraction)
			require.NoError(t, err, in)
			assert.InDelta(t, want, f, 1e-15, in)
		}
	}
	f, err := Percent("0.5", true)
	require.NoError(t, err)
	assert.Equal(t, 0.5, f)
	f, err = Percent("1", true)
	require.NoError(t, err)
	assert.Equal(t, 1.0, f)
	_, err = Percent("0.5", false)
	assert.ErrorContains(t, err, "percentage from 1% to 100%, like 50%")
	for _, in := range []string{"0%", "0.5%", "101%", "-5%", "%", "half", "NaN%", "1.5", "0", "0.001", "50%%"} {
		_, err := Percent(in, true)
		assert.ErrorContains(t, err, "or a fraction from 0.01 to 1", in)
	}
}

func TestThrottle(t *testing.T) {
	for in, want := range map[string]float64{"1": 1, "2": 2, "1.5": 1.5} {
		k, err := Throttle(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, k)
	}
	for _, in := range []string{"0.9", "0", "-2", "NaN", "Inf", "2e7", "two", ""} {
		_, err := Throttle(in)
		assert.ErrorContains(t, err, "want a number >= 1", in)
	}
}

func goDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive Go duration")
	}
	return d, nil
}

func TestReset(t *testing.T) {
	for in, want := range map[string][2]time.Duration{
		"30s":       {30 * time.Second, 0},
		"30s..10m":  {30 * time.Second, 10 * time.Minute},
		" 1m..1m ":  {time.Minute, time.Minute},
		"500ms..2s": {500 * time.Millisecond, 2 * time.Second},
	} {
		d, m, err := Reset(in, goDuration)
		require.NoError(t, err, in)
		assert.Equal(t, want, [2]time.Duration{d, m}, in)
	}
	_, _, err := Reset("10m..30s", goDuration)
	assert.EqualError(t, err, "the cap 30s is below the first period 10m0s")
	_, _, err = Reset("25h", goDuration)
	assert.EqualError(t, err, "25h0m0s is more than 24h0m0s, the longest OPEN period")
	_, _, err = Reset("1m..48h", goDuration)
	assert.EqualError(t, err, "the cap 48h0m0s is more than 24h0m0s, the longest OPEN period")
	d, m, err := Reset("24h..24h", goDuration)
	require.NoError(t, err)
	assert.Equal(t, [2]time.Duration{24 * time.Hour, 24 * time.Hour}, [2]time.Duration{d, m})
	for _, in := range []string{"", "..", "30s..", "..10m", "0s..1m", "x..1m", "30s..10m..1h"} {
		_, _, err := Reset(in, goDuration)
		assert.Error(t, err, in)
	}
}

func TestJitter(t *testing.T) {
	for in, want := range map[string]float64{"0%": 0, "20%": 0.2, "100%": 1, " 5% ": 0.05} {
		f, err := Jitter(in, false)
		require.NoError(t, err, in)
		assert.InDelta(t, want, f, 1e-12, in)
	}
	f, err := Jitter("0.2", true)
	require.NoError(t, err)
	assert.InDelta(t, 0.2, f, 1e-12)
	for _, in := range []string{"101%", "-1%", "NaN%", "%", "0.2", "twenty"} {
		_, err := Jitter(in, false)
		assert.ErrorContains(t, err, "from 0% to 100%", in)
	}
	_, err = Jitter("1.5", true)
	assert.ErrorContains(t, err, "or a fraction from 0 to 1")
}
