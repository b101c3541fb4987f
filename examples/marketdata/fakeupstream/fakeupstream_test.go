package fakeupstream_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/examples/marketdata/fakeupstream"
)

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

func TestBehaviors(t *testing.T) {
	s := fakeupstream.New()
	c := &http.Client{Transport: s.Transport()}
	url := s.Endpoints().Eastmoney + "/search?q=gzmt"

	res, body := get(t, c, url)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, "600519")

	s.Fail(marketdata.Eastmoney, http.StatusBadGateway)
	res, body = get(t, c, url)
	assert.Equal(t, http.StatusBadGateway, res.StatusCode)
	assert.JSONEq(t, `{"error":"Bad Gateway"}`, body)

	s.Throttle(marketdata.Eastmoney, 1500*time.Millisecond)
	res, _ = get(t, c, url)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "2", res.Header.Get("Retry-After"), "rounded up to whole seconds")

	s.Ban(marketdata.Eastmoney)
	res, _ = get(t, c, url)
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Empty(t, res.Header.Get("Retry-After"))

	s.Healthy(marketdata.Eastmoney)
	res, _ = get(t, c, url)
	assert.Equal(t, http.StatusOK, res.StatusCode)

	assert.Equal(t, int64(5), s.Requests(marketdata.Eastmoney))
	assert.Zero(t, s.Requests(marketdata.Tencent))

	res, _ = get(t, c, s.Endpoints().Tencent+"/quote?code=000000")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "unknown stock")
	res, _ = get(t, c, s.Endpoints().Tencent+"/nope")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "unknown endpoint")
	res, _ = get(t, c, "http://upstream.test/xueqiu/quote")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "unknown provider")
	assert.Equal(t, int64(2), s.Requests(marketdata.Tencent))
	assert.Zero(t, s.Requests("xueqiu"))

	// sina serves fund flows, the backup of eastmoney's; Empty answers
	// 200 with no data.
	res, body = get(t, c, s.Endpoints().Sina+"/fundflow?code=600519")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"code":"600519"`)
	s.Set(marketdata.Sina, fakeupstream.Behavior{Empty: true})
	res, body = get(t, c, s.Endpoints().Sina+"/fundflow?code=600519")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{}`, body)
	assert.Equal(t, "200 OK, empty answers", s.Behavior(marketdata.Sina).String())
}

// TestPattern: a provider with a pattern fails exactly the requests its
// 'x's stand for, counted from when the behavior was set.
func TestPattern(t *testing.T) {
	s := fakeupstream.New()
	c := &http.Client{Transport: s.Transport()}
	url := s.Endpoints().TDX + "/finance?code=600519"
	get(t, c, url) // requests before Set do not shift the pattern

	s.Set(marketdata.TDX, fakeupstream.Behavior{Status: http.StatusServiceUnavailable, Pattern: "..x"})
	assert.Equal(t, "1 in 3: 503 Service Unavailable", s.Behavior(marketdata.TDX).String())
	var codes []int
	for range 7 {
		res, _ := get(t, c, url)
		codes = append(codes, res.StatusCode)
	}
	assert.Equal(t, []int{200, 200, 503, 200, 200, 503, 200}, codes)

	// Without a failing status a pattern changes nothing.
	s.Set(marketdata.TDX, fakeupstream.Behavior{Pattern: "xx"})
	for range 3 {
		res, _ := get(t, c, url)
		assert.Equal(t, http.StatusOK, res.StatusCode)
	}
}

func TestSlowHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fakeupstream.New()
		s.Slow(marketdata.TDX, time.Minute)
		c := &http.Client{Transport: s.Transport()}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoints().TDX+"/finance?code=600519", nil)
		require.NoError(t, err)
		start := time.Now()
		_, err = c.Do(req)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, int64(1), s.Requests(marketdata.TDX), "a request that timed out still reached the upstream")
	})
}

func TestStartServesLoopback(t *testing.T) {
	s := fakeupstream.New()
	base, err := s.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+$`, base)
	assert.Equal(t, base+"/tdx", s.Endpoints().TDX)
	res, body := get(t, http.DefaultClient, base+"/push2ex/ping")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"status":"ok"}`, body)
	assert.Equal(t, "200 OK", s.Behavior(marketdata.Push2ex).String())
}
