package prometheus

import "github.com/breakergen/breakergen/runtime"

// SetChainAnswers makes c read the chains' answers from f, for tests of
// the family before generated chains count their answers.
func SetChainAnswers(c *Collector, f func() []runtime.ChainAnswer) { c.answers = f }
