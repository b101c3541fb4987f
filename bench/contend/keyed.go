package contend

import (
	"time"

	"github.com/breakergen/breakergen/bench/quote"
	"github.com/breakergen/breakergen/runtime"
)

// The keyed rows (SPEC §15, issue 30) call what breakergen generates for
// `key=code` (a string key) and for `key=id` (an integer key):
// quote.KeyedQuoterBreaker and quote.IDQuoterBreaker, from the
// annotations in bench/quote. A generated wrapper's family has the
// annotation's bound (`keys`, 1000 when none is given); a family made by
// hand before it, with the same name on the same registry, is the
// wrapper's family, its bound kept (breakerimpl.NewFamily), which is how
// the rows size theirs.

// NewKeyedQuoter returns the generated wrapper keyed by code over next,
// with at most keys live keys, and its family.
func NewKeyedQuoter(next quote.KeyedQuoter, reg *runtime.Registry, keys int) (*quote.KeyedQuoterBreaker, *runtime.Family) {
	f := keyedFamily(reg, "keyed", keys)
	return quote.NewKeyedQuoterBreaker(next, reg), f
}

// NewKeyedIDQuoter returns the generated wrapper keyed by id over next,
// with at most keys live keys, and its family.
func NewKeyedIDQuoter(next quote.IDQuoter, reg *runtime.Registry, keys int) (*quote.IDQuoterBreaker, *runtime.Family) {
	f := keyedFamily(reg, "keyedids", keys)
	return quote.NewIDQuoterBreaker(next, reg), f
}

// keyedFamily makes the family name on reg with the settings of its
// annotation in bench/quote and a bound of keys, before the wrapper does.
// Change them with the annotation: the family keeps the first settings it
// is given, and the registry's warning that the wrapper's differ goes to
// the rows' discarded log (keyedRegistry).
func keyedFamily(reg *runtime.Registry, name string, keys int) *runtime.Family {
	return reg.Family(runtime.Config{Name: name, FailureThreshold: 5, ResetTimeout: time.Hour}, runtime.FamilyConfig{Keys: keys})
}
