package contend

import (
	"context"
	"time"

	"github.com/breakergen/breakergen/bench/quote"
	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/breakerimpl"
)

// The keyed rows (SPEC §15, issue 30): quote.Quoter with one breaker per
// key, in the shape breakergen generates for `key=code` (a string key) and
// for a method keyed by an integer parameter. Until the generator emits
// keyed wrappers into bench/quote, these mirror that shape by hand, like
// Floor mirrors the plain wrapper: when the generated keyed shape changes,
// change these with it.

// KeyedQuoter is a Quoter with one breaker per code, "quotes/<code>".
type KeyedQuoter struct {
	next   quote.Quoter
	family *breakerimpl.Family
}

// NewKeyedQuoter returns next keyed by code, with at most keys live keys.
func NewKeyedQuoter(next quote.Quoter, reg *runtime.Registry, keys int) *KeyedQuoter {
	return &KeyedQuoter{next: next, family: keyedFamily(next, reg, keys)}
}

// Quote implements quote.Quoter.
func (w *KeyedQuoter) Quote(ctx context.Context, code string) (_ quote.Quote, err error) {
	k := w.family.Key(code)
	call, ok := k.EnterFast()
	if !ok {
		if err = k.Refusal(call); err != nil {
			return
		}
		if call, err = k.Enter(ctx); err != nil {
			return
		}
	}
	defer func() { k.Exit(call, ctx, err, err == breakerimpl.PanicGuard && k.Panicked(call, recover())); k.Done() }()
	err = breakerimpl.PanicGuard // stays only if the call panics
	return w.next.Quote(ctx, code)
}

// Live returns how many keys are live.
func (w *KeyedQuoter) Live() int { return w.family.Runtime().Len() }

// IDQuoter is the quote call keyed by an integer: the instrument's id.
type IDQuoter interface {
	QuoteID(ctx context.Context, id int64) (quote.Quote, error)
}

// KeyedIDQuoter is an IDQuoter with one breaker per id, "quotes/<id>",
// calling next with a fixed code.
type KeyedIDQuoter struct {
	next   quote.Quoter
	family *breakerimpl.Family
}

// NewKeyedIDQuoter returns next keyed by id, with at most keys live keys.
func NewKeyedIDQuoter(next quote.Quoter, reg *runtime.Registry, keys int) *KeyedIDQuoter {
	return &KeyedIDQuoter{next: next, family: keyedFamily(next, reg, keys)}
}

// QuoteID implements IDQuoter.
func (w *KeyedIDQuoter) QuoteID(ctx context.Context, id int64) (_ quote.Quote, err error) {
	k := w.family.KeyInt(id)
	call, ok := k.EnterFast()
	if !ok {
		if err = k.Refusal(call); err != nil {
			return
		}
		if call, err = k.Enter(ctx); err != nil {
			return
		}
	}
	defer func() { k.Exit(call, ctx, err, err == breakerimpl.PanicGuard && k.Panicked(call, recover())); k.Done() }()
	err = breakerimpl.PanicGuard // stays only if the call panics
	return w.next.Quote(ctx, "600519")
}

// Live returns how many keys are live.
func (w *KeyedIDQuoter) Live() int { return w.family.Runtime().Len() }

func keyedFamily(next quote.Quoter, reg *runtime.Registry, keys int) *breakerimpl.Family {
	return breakerimpl.NewFamily(reg, next, breakerimpl.RouteConfig{
		Breaker: runtime.Config{Name: "quotes", FailureThreshold: 5, ResetTimeout: time.Hour}}, keys, 0)
}
