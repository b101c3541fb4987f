// Package quote holds the one typed interface every contender of the
// benchmark wraps, its breakergen wrappers and the upstream they all call.
package quote

import "context"

//go:generate go run github.com/breakergen/breakergen/cmd/breakergen

// Quote is one price of one instrument.
type Quote struct {
	Code  string
	Price float64
}

// Quoter is the upstream every contender wraps; its chain (primary plus
// fallbacks) is measured too.
//
//breaker:name=quotes threshold=5 reset=30s chain
type Quoter interface {
	Quote(ctx context.Context, code string) (Quote, error)
}

// LimitedQuoter is a Quoter behind a limiter whose token is always there
// (a billion a second), for the limiter-plus-breaker scenario.
//
//breaker:name=limited threshold=5 reset=30s ratelimit=1000000000/1000000
type LimitedQuoter interface {
	Quote(ctx context.Context, code string) (Quote, error)
}

// HedgedQuoter is a Quoter whose chain is hedged, with a delay (an hour)
// that its primary always beats: what hedging costs a call whose primary
// answers at once (issue 24).
//
//breaker:name=hedged threshold=5 reset=30s hedge=1h chain
type HedgedQuoter interface {
	Quote(ctx context.Context, code string) (Quote, error)
}

// KeyedQuoter is a Quoter with one breaker per code ("keyed/<code>",
// SPEC §15), for the keyed rows of issue 30. The benchmark sizes its
// family by making it first (runtime.Registry.Family).
//
//breaker:name=keyed threshold=5 reset=1h key=code
type KeyedQuoter interface {
	Quote(ctx context.Context, code string) (Quote, error)
}

// IDQuoter is the quote call keyed by an integer, the instrument's id:
// one breaker per id ("keyedids/<id>").
//
//breaker:name=keyedids threshold=5 reset=1h key=id
type IDQuoter interface {
	QuoteID(ctx context.Context, id int64) (Quote, error)
}

// Cmd is a quote command that carries its error, as go-redis's commands
// do (SPEC §12).
type Cmd struct {
	q   Quote
	err error
}

// Val returns the command's quote.
func (c *Cmd) Val() Quote { return c.q }

// Err returns the command's error.
func (c *Cmd) Err() error { return c.err }

// SetErr sets the command's error: a wrapper returns its refusal so.
func (c *Cmd) SetErr(err error) { c.err = err }

// CmdQuoter is the quote call in go-redis's shape, whose answer carries
// its outcome: the judged wrapper, and a chain of such methods (SPEC §6
// with §12).
//
//breaker:name=cmds threshold=5 reset=30s chain
type CmdQuoter interface {
	QuoteCmd(ctx context.Context, code string) *Cmd
}

// StaleCmdQuoter is a CmdQuoter that keeps its last answer per code for
// an hour: what a cache costs a judged success.
//
//breaker:name=cmdstale threshold=5 reset=30s stale=1h
type StaleCmdQuoter interface {
	QuoteCmd(ctx context.Context, code string) *Cmd
}
