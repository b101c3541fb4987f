package quote

import (
	"context"
	"errors"
)

// ErrUpstream is the error a failing Upstream returns, allocated once.
var ErrUpstream = errors.New("quote: upstream down")

// Upstream is the implementation behind every contender: it returns a
// preallocated Quote and error, so that a benchmark measures the wrapper
// and nothing else. The zero value answers with a zero Quote and no error.
// It is safe for concurrent use.
type Upstream struct {
	q   Quote
	err error
	cmd *Cmd // QuoteCmd's answer: q and err
}

// NewUpstream returns an Upstream that answers every call with a fixed
// Quote and err.
func NewUpstream(err error) *Upstream {
	q := Quote{Code: "600519", Price: 1688.0}
	return &Upstream{q: q, err: err, cmd: &Cmd{q: q, err: err}}
}

// Quote returns the preallocated answer. It is never inlined, so every
// contender, the direct call included, pays for one real call.
//
//go:noinline
func (u *Upstream) Quote(ctx context.Context, code string) (Quote, error) {
	return u.q, u.err
}

// QuoteID is Quote for the instrument of an id, with the same answer.
//
//go:noinline
func (u *Upstream) QuoteID(ctx context.Context, id int64) (Quote, error) {
	return u.q, u.err
}

// QuoteCmd is Quote as a command that carries its error, preallocated.
// The zero Upstream answers a zero command.
//
//go:noinline
func (u *Upstream) QuoteCmd(ctx context.Context, code string) *Cmd {
	if u.cmd == nil {
		return &Cmd{}
	}
	return u.cmd
}
