package fakeupstream

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/breakergen/breakergen/examples/marketdata"
)

// stock is one stock of the canned data.
type stock struct {
	info     marketdata.StockInfo
	initials string // pinyin initials, for search
	board    string // industry board code
	price    float64
	change   float64
}

var stocks = []stock{
	{marketdata.StockInfo{Code: "600519", Name: "贵州茅台", Market: "SH", Industry: "白酒", Listed: "2001-08-27"}, "gzmt", "BK0896", 1688.00, 0.52},
	{marketdata.StockInfo{Code: "000858", Name: "五粮液", Market: "SZ", Industry: "白酒", Listed: "1998-04-27"}, "wly", "BK0896", 142.35, -0.31},
	{marketdata.StockInfo{Code: "000001", Name: "平安银行", Market: "SZ", Industry: "银行", Listed: "1991-04-03"}, "payh", "BK0475", 11.32, 1.25},
	{marketdata.StockInfo{Code: "601398", Name: "工商银行", Market: "SH", Industry: "银行", Listed: "2006-10-27"}, "gsyh", "BK0475", 7.05, 0.14},
	{marketdata.StockInfo{Code: "300750", Name: "宁德时代", Market: "SZ", Industry: "电池", Listed: "2018-06-11"}, "ndsd", "BK1033", 268.50, -1.87},
}

func lookup(code string) (stock, bool) {
	for _, s := range stocks {
		if s.info.Code == code {
			return s, true
		}
	}
	return stock{}, false
}

func (s stock) quote(now time.Time) marketdata.Quote {
	return marketdata.Quote{Code: s.info.Code, Name: s.info.Name, Price: s.price, ChangePct: s.change,
		Volume: int64(1e9 / s.price), Time: now.Truncate(time.Second)}
}

// answer is the body of a successful request to endpoint of provider, or
// the status of a failed one.
func answer(provider, endpoint string, q url.Values) (any, int) {
	now := time.Now()
	if endpoint == "ping" {
		return map[string]string{"status": "ok"}, http.StatusOK
	}
	switch provider + "/" + endpoint {
	case "tencent/quote":
		if s, ok := lookup(q.Get("code")); ok {
			return s.quote(now), http.StatusOK
		}
	case "tencent/stock":
		if s, ok := lookup(q.Get("code")); ok {
			return s.info, http.StatusOK
		}
	case "eastmoney/quotes":
		out := []marketdata.Quote{}
		for _, c := range strings.Split(q.Get("codes"), ",") {
			if s, ok := lookup(c); ok {
				out = append(out, s.quote(now))
			}
		}
		return out, http.StatusOK
	case "eastmoney/search":
		return search(q.Get("q")), http.StatusOK
	case "eastmoney/industry":
		if s, ok := lookup(q.Get("code")); ok {
			in := marketdata.Industry{Code: s.board, Name: s.info.Industry, Peers: []string{}}
			for _, p := range stocks {
				if p.board == s.board {
					in.Peers = append(in.Peers, p.info.Code)
				}
			}
			return in, http.StatusOK
		}
	case "eastmoney/fundflow", "sina/fundflow":
		if s, ok := lookup(q.Get("code")); ok {
			return marketdata.FundFlow{Code: s.info.Code, MainNet: s.change * 1.2e8, RetailNet: -s.change * 0.7e8,
				Time: now.Truncate(time.Second)}, http.StatusOK
		}
	case "tdx/kline":
		if s, ok := lookup(q.Get("code")); ok {
			n, err := strconv.Atoi(q.Get("n"))
			if err != nil || n < 1 || n > 500 {
				return nil, http.StatusBadRequest
			}
			return bars(s, marketdata.Period(q.Get("period")), n, now), http.StatusOK
		}
	case "tdx/finance":
		if s, ok := lookup(q.Get("code")); ok {
			return marketdata.Financials{Code: s.info.Code, Report: "2026Q3", Revenue: s.price * 1e8,
				NetProfit: s.price * 4e7, EPS: s.price / 30, ROE: 12.5, DebtRatio: 41.3, ReportedAt: "2026-10-28"}, http.StatusOK
		}
	case "push2ex/changes":
		day := now.Truncate(24 * time.Hour)
		return []marketdata.Change{
			{Time: day.Add(6*time.Hour + 55*time.Minute), Code: "300750", Name: "宁德时代", Kind: "big_sell", Info: "大笔卖出 1.2亿"},
			{Time: day.Add(6*time.Hour + 41*time.Minute), Code: "000001", Name: "平安银行", Kind: "rapid_rise", Info: "5分钟涨幅 2.1%"},
			{Time: day.Add(2*time.Hour + 3*time.Minute), Code: "600519", Name: "贵州茅台", Kind: "big_buy", Info: "大笔买入 8600万"},
		}, http.StatusOK
	default:
		return nil, http.StatusNotFound
	}
	return nil, http.StatusNotFound // no such stock
}

func search(query string) []marketdata.Hit {
	out := []marketdata.Hit{}
	query = strings.ToLower(strings.TrimSpace(query))
	if query == "" {
		return out
	}
	for _, s := range stocks {
		if strings.HasPrefix(s.info.Code, query) || strings.Contains(s.info.Name, query) ||
			strings.HasPrefix(s.initials, query) || strings.Contains(s.info.Industry, query) {
			out = append(out, marketdata.Hit{Code: s.info.Code, Name: s.info.Name, Market: s.info.Market})
		}
	}
	return out
}

// bars makes n deterministic bars ending at the day of now.
func bars(s stock, p marketdata.Period, n int, now time.Time) []marketdata.Bar {
	step := 24 * time.Hour
	switch p {
	case marketdata.PeriodWeek:
		step *= 7
	case marketdata.PeriodMonth:
		step *= 30
	}
	end := now.Truncate(24 * time.Hour)
	out := make([]marketdata.Bar, n)
	for i := range out {
		k := float64(n - 1 - i)
		c := s.price * (1 + 0.01*math.Sin(k/2) - 0.002*k)
		o := c * (1 - 0.004*math.Cos(k))
		out[i] = marketdata.Bar{Time: end.Add(-time.Duration(n-1-i) * step), Open: round2(o), Close: round2(c),
			High: round2(max(o, c) * 1.006), Low: round2(min(o, c) * 0.994), Volume: int64(8e8 / s.price)}
	}
	return out
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
