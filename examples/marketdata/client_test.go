package marketdata_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/examples/marketdata/fakeupstream"
)

// TestClientOverLoopback talks to the fake upstream through a real socket.
func TestClientOverLoopback(t *testing.T) {
	up := fakeupstream.New()
	_, err := up.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = up.Close() })
	c := up.Client()
	ctx := t.Context()

	q, err := c.Quote(ctx, "600519")
	require.NoError(t, err)
	assert.Equal(t, "贵州茅台", q.Name)
	assert.InDelta(t, 1688.0, q.Price, 1e-9)

	info, err := c.StockInfo(ctx, "000001")
	require.NoError(t, err)
	assert.Equal(t, "SZ", info.Market)

	qs, err := c.QuoteList(ctx, []string{"600519", "300750", "999999"})
	require.NoError(t, err)
	assert.Len(t, qs, 2)

	hits, err := c.Search(ctx, "银行")
	require.NoError(t, err)
	assert.Len(t, hits, 2)

	in, err := c.Industry(ctx, "600519")
	require.NoError(t, err)
	assert.Equal(t, []string{"600519", "000858"}, in.Peers)

	bars, err := c.Kline(ctx, "300750", marketdata.PeriodDay, 5)
	require.NoError(t, err)
	assert.Len(t, bars, 5)

	fin, err := c.Finance(ctx, "600519")
	require.NoError(t, err)
	assert.Equal(t, "2026Q3", fin.Report)

	changes, err := c.Changes(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, changes)

	flow, err := c.FundFlow(ctx, "000001")
	require.NoError(t, err)
	assert.Positive(t, flow.MainNet)

	require.NoError(t, c.Ping(ctx))

	assert.Equal(t, int64(5), up.Requests(marketdata.Eastmoney)) // quotes, search, industry, fundflow, ping
	assert.Equal(t, int64(3), up.Requests(marketdata.Tencent))
	assert.Equal(t, int64(3), up.Requests(marketdata.TDX))
	assert.Equal(t, int64(2), up.Requests(marketdata.Push2ex))
}

func TestClientStatusErrors(t *testing.T) {
	tests := []struct {
		name      string
		set       func(*fakeupstream.Server)
		code      string
		status    int
		wait      time.Duration
		retryable bool
		notFound  bool
	}{
		{"outage", func(s *fakeupstream.Server) { s.Fail(marketdata.Tencent, 503) }, "600519", 503, 0, true, false},
		{"ban", func(s *fakeupstream.Server) { s.Ban(marketdata.Tencent) }, "600519", 403, marketdata.DefaultBanCooldown, false, false},
		{"throttle", func(s *fakeupstream.Server) { s.Throttle(marketdata.Tencent, 2*time.Second) }, "600519", 429, 2 * time.Second, true, false},
		{"unknown code", func(*fakeupstream.Server) {}, "999999", 404, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := fakeupstream.New()
			tt.set(up)
			_, err := up.Client().Quote(t.Context(), tt.code)
			var se *marketdata.StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, marketdata.Tencent, se.Provider)
			assert.Equal(t, tt.status, se.Code)
			assert.Equal(t, tt.wait, se.Wait)
			assert.Equal(t, tt.retryable, se.Retryable())
			assert.Equal(t, tt.notFound, errors.Is(err, marketdata.ErrNotFound))
			assert.Equal(t, int64(1), up.Requests(marketdata.Tencent))
		})
	}
}

func TestClientBanCooldown(t *testing.T) {
	up := fakeupstream.New()
	up.Ban(marketdata.Eastmoney)
	c := up.Client()
	c.BanCooldown = 2 * time.Second
	_, err := c.Search(t.Context(), "gzmt")
	var se *marketdata.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2*time.Second, se.Wait)
	assert.Equal(t, "eastmoney: HTTP 403 Forbidden, banned, cool down 2s", se.Error())
}

func TestClientSlowUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := fakeupstream.New()
		up.Slow(marketdata.TDX, 2*time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := up.Client().Kline(ctx, "600519", marketdata.PeriodDay, 3)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 300*time.Millisecond, time.Since(start))

		up.Slow(marketdata.TDX, 100*time.Millisecond)
		_, err = up.Client().Kline(t.Context(), "600519", marketdata.PeriodDay, 3)
		require.NoError(t, err)
		assert.Equal(t, 400*time.Millisecond, time.Since(start))
	})
}

func TestClientNoEndpoint(t *testing.T) {
	c := &marketdata.Client{HTTP: &http.Client{}}
	_, err := c.Quote(t.Context(), "600519")
	require.EqualError(t, err, "marketdata: no endpoint for tencent")
}
