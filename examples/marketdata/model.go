package marketdata

import "time"

// Quote is a real-time quote of one stock.
type Quote struct {
	Code      string    `json:"code"`       // six digits, e.g. "600519"
	Name      string    `json:"name"`       // short name, e.g. "贵州茅台"
	Price     float64   `json:"price"`      // last price, CNY
	ChangePct float64   `json:"change_pct"` // change from the previous close, in percent
	Volume    int64     `json:"volume"`     // shares traded today
	Time      time.Time `json:"time"`       // when the upstream took the quote
}

// StockInfo is the static description of one stock.
type StockInfo struct {
	Code     string `json:"code"`     // six digits
	Name     string `json:"name"`     // short name
	Market   string `json:"market"`   // "SH" or "SZ"
	Industry string `json:"industry"` // industry name, e.g. "白酒"
	Listed   string `json:"listed"`   // listing date, YYYY-MM-DD
}

// Hit is one search result.
type Hit struct {
	Code   string `json:"code"`   // six digits
	Name   string `json:"name"`   // short name
	Market string `json:"market"` // "SH" or "SZ"
}

// Industry is the industry a stock belongs to, with its peers.
type Industry struct {
	Code  string   `json:"code"`  // the industry board's code
	Name  string   `json:"name"`  // e.g. "银行"
	Peers []string `json:"peers"` // codes of the stocks on the board
}

// Period is the length of one k-line bar.
type Period string

// The periods the upstreams serve.
const (
	PeriodDay   Period = "day"
	PeriodWeek  Period = "week"
	PeriodMonth Period = "month"
)

// Bar is one k-line (candlestick) bar.
type Bar struct {
	Time   time.Time `json:"time"`   // start of the period
	Open   float64   `json:"open"`   // CNY
	High   float64   `json:"high"`   // CNY
	Low    float64   `json:"low"`    // CNY
	Close  float64   `json:"close"`  // CNY
	Volume int64     `json:"volume"` // shares traded in the period
}

// Financials are the headline figures of a stock's latest report.
type Financials struct {
	Code       string  `json:"code"`        // six digits
	Report     string  `json:"report"`      // report period, e.g. "2026Q3"
	Revenue    float64 `json:"revenue"`     // CNY
	NetProfit  float64 `json:"net_profit"`  // CNY
	EPS        float64 `json:"eps"`         // earnings per share, CNY
	ROE        float64 `json:"roe"`         // return on equity, percent
	DebtRatio  float64 `json:"debt_ratio"`  // liabilities over assets, percent
	ReportedAt string  `json:"reported_at"` // publication date, YYYY-MM-DD
}

// Change is one intraday change event (异动): a limit-up, a large order, a
// sudden rise...
type Change struct {
	Time time.Time `json:"time"` // when it happened
	Code string    `json:"code"` // the stock's six digits
	Name string    `json:"name"` // the stock's short name
	Kind string    `json:"kind"` // e.g. "limit_up", "big_buy", "rapid_rise"
	Info string    `json:"info"` // the upstream's one-line description
}

// FundFlow is a stock's money flow today, by order size.
type FundFlow struct {
	Code      string    `json:"code"`       // six digits
	MainNet   float64   `json:"main_net"`   // net inflow of large and extra-large orders, CNY
	RetailNet float64   `json:"retail_net"` // net inflow of small orders, CNY
	Time      time.Time `json:"time"`       // when the upstream computed it
}
