package marketdata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Endpoints are the base URLs of the upstreams, without a trailing slash,
// e.g. "https://searchapi.example/em".
type Endpoints struct {
	Eastmoney string // search, industry, quote lists, fund flow
	Tencent   string // quotes and stock info
	TDX       string // k-lines and financials
	Push2ex   string // intraday changes
	Sina      string // fund flow, the backup of eastmoney's
}

// Client implements [StockSource] and [FundFlowSource] over the upstreams'
// HTTP JSON APIs. Its zero value has no endpoints and fails every call; set
// Endpoints. A Client is safe for concurrent use.
//
// Client knows nothing of breakers: wrap it with [NewStockSourceBreaker]
// and [NewFundFlowSourceBreaker].
type Client struct {
	// HTTP sends the requests. Default: http.DefaultClient. Deadlines come
	// from each call's ctx.
	HTTP *http.Client
	// Endpoints are the upstreams' base URLs.
	Endpoints Endpoints
	// BanCooldown is how long a 403 asks us to stay away from an upstream
	// that sends no Retry-After. Default: [DefaultBanCooldown].
	BanCooldown time.Duration
}

var (
	_ StockSource    = (*Client)(nil)
	_ FundFlowSource = (*Client)(nil)
)

// Quote returns the real-time quote of the stock code, from tencent.
func (c *Client) Quote(ctx context.Context, code string) (Quote, error) {
	var q Quote
	err := c.get(ctx, Tencent, "/quote", url.Values{"code": {code}}, &q)
	return q, err
}

// StockInfo returns the static description of the stock code, from tencent.
func (c *Client) StockInfo(ctx context.Context, code string) (StockInfo, error) {
	var s StockInfo
	err := c.get(ctx, Tencent, "/stock", url.Values{"code": {code}}, &s)
	return s, err
}

// QuoteList returns the quotes of several stocks, from eastmoney.
func (c *Client) QuoteList(ctx context.Context, codes []string) ([]Quote, error) {
	var qs []Quote
	err := c.get(ctx, Eastmoney, "/quotes", url.Values{"codes": {strings.Join(codes, ",")}}, &qs)
	return qs, err
}

// Search finds stocks by code, name or pinyin initials, on eastmoney.
func (c *Client) Search(ctx context.Context, query string) ([]Hit, error) {
	var hs []Hit
	err := c.get(ctx, Eastmoney, "/search", url.Values{"q": {query}}, &hs)
	return hs, err
}

// Industry returns the industry board of the stock code, from eastmoney.
func (c *Client) Industry(ctx context.Context, code string) (Industry, error) {
	var in Industry
	err := c.get(ctx, Eastmoney, "/industry", url.Values{"code": {code}}, &in)
	return in, err
}

// Kline returns the last n bars of the stock code, from tdx.
func (c *Client) Kline(ctx context.Context, code string, period Period, n int) ([]Bar, error) {
	var bs []Bar
	err := c.get(ctx, TDX, "/kline", url.Values{"code": {code}, "period": {string(period)}, "n": {strconv.Itoa(n)}}, &bs)
	return bs, err
}

// Finance returns the latest report's figures of the stock code, from tdx.
func (c *Client) Finance(ctx context.Context, code string) (Financials, error) {
	var f Financials
	err := c.get(ctx, TDX, "/finance", url.Values{"code": {code}}, &f)
	return f, err
}

// Changes returns today's intraday change events, newest first, from
// push2ex.
func (c *Client) Changes(ctx context.Context) ([]Change, error) {
	var cs []Change
	err := c.get(ctx, Push2ex, "/changes", nil, &cs)
	return cs, err
}

// FundFlow returns today's money flow of the stock code, from eastmoney.
func (c *Client) FundFlow(ctx context.Context, code string) (FundFlow, error) {
	var f FundFlow
	err := c.get(ctx, Eastmoney, "/fundflow", url.Values{"code": {code}}, &f)
	return f, err
}

// Sina returns the backup source of fund flows: the same API on sina's
// endpoint. The origin service fell back to it when eastmoney's answer was
// missing or empty; [NewFundFlowSourceChain] does that with it as a
// [runtime.Fallback].
func (c *Client) Sina() FundFlowSource { return sinaFlows{c} }

// sinaFlows is the FundFlowSource served by sina.
type sinaFlows struct{ c *Client }

// FundFlow returns today's money flow of the stock code, from sina.
func (s sinaFlows) FundFlow(ctx context.Context, code string) (FundFlow, error) {
	var f FundFlow
	err := s.c.get(ctx, Sina, "/fundflow", url.Values{"code": {code}}, &f)
	return f, err
}

// Ping asks every upstream's /ping and returns the errors of those that did
// not answer 2xx, joined.
func (c *Client) Ping(ctx context.Context) error {
	var errs []error
	for _, p := range []string{Eastmoney, Tencent, TDX, Push2ex} {
		errs = append(errs, c.get(ctx, p, "/ping", nil, nil))
	}
	return errors.Join(errs...)
}

// Name returns "http".
func (c *Client) Name() string { return "http" }

func (c *Client) base(provider string) string {
	switch provider {
	case Eastmoney:
		return c.Endpoints.Eastmoney
	case Tencent:
		return c.Endpoints.Tencent
	case TDX:
		return c.Endpoints.TDX
	case Push2ex:
		return c.Endpoints.Push2ex
	case Sina:
		return c.Endpoints.Sina
	}
	return ""
}

// get sends GET path?query to provider and decodes the JSON answer into out
// (nil: the body is discarded). A non-2xx answer is a *StatusError; a
// transport failure is the *url.Error of net/http.
func (c *Client) get(ctx context.Context, provider, path string, query url.Values, out any) error {
	base := c.base(provider)
	if base == "" {
		return fmt.Errorf("marketdata: no endpoint for %s", provider)
	}
	u := base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() {
		// Drain a little so that the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
		_ = res.Body.Close()
	}()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return c.statusError(provider, res)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("%s: decoding %s: %w", provider, path, err)
	}
	return nil
}

func (c *Client) statusError(provider string, res *http.Response) error {
	e := &StatusError{Provider: provider, Code: res.StatusCode,
		Wait: parseRetryAfter(res.Header.Get("Retry-After"), time.Now())}
	if e.Code == http.StatusForbidden && e.Wait == 0 {
		e.Wait = c.BanCooldown
		if e.Wait <= 0 {
			e.Wait = DefaultBanCooldown
		}
	}
	if e.Wait > 0 {
		return &CooldownError{e}
	}
	return e
}
