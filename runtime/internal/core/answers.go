package core

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// The kinds of a chain call's answer (runtime.ChainAnswer.Kind).
const (
	AnswerLive     = "live"     // the primary answered
	AnswerFallback = "fallback" // a fallback answered, asked in order
	AnswerHedged   = "hedged"   // a source asked as a hedge answered first
	AnswerStale    = "stale"    // the stale cache answered
	AnswerNone     = "none"     // no source answered
)

// Answers counts the answers of a registry's chains by source and kind.
// The zero value is ready to use; it is safe for concurrent use.
type Answers struct {
	mu     sync.Mutex // guards counts
	counts map[AnswerKey]*atomic.Uint64
}

// AnswerKey is what an answer is counted by.
type AnswerKey struct{ Source, Kind string }

// Counter returns the counter of source and kind, creating it. Callers on
// a hot path keep it; the others call [Answers.Add].
func (a *Answers) Counter(source, kind string) *atomic.Uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := AnswerKey{source, kind}
	c := a.counts[k]
	if c == nil {
		if a.counts == nil {
			a.counts = map[AnswerKey]*atomic.Uint64{}
		}
		c = new(atomic.Uint64)
		a.counts[k] = c
	}
	return c
}

// Add counts one answer of source and kind; a nil a counts nothing.
func (a *Answers) Add(source, kind string) {
	if a != nil {
		a.Counter(source, kind).Add(1)
	}
}

// AnswerCount is one counter's value.
type AnswerCount struct {
	AnswerKey
	Count uint64
}

// Counts returns every counter that has counted something, in source and
// kind order.
func (a *Answers) Counts() []AnswerCount {
	a.mu.Lock()
	var out []AnswerCount
	for k, c := range a.counts {
		if n := c.Load(); n > 0 {
			out = append(out, AnswerCount{k, n})
		}
	}
	a.mu.Unlock()
	slices.SortFunc(out, func(x, y AnswerCount) int {
		return cmp.Or(cmp.Compare(x.Source, y.Source), cmp.Compare(x.Kind, y.Kind))
	})
	return out
}

// AnswersOf returns the answer counters of a *runtime.Registry, and
// whether the registry counts every call (runtime.WithCallCounts), which
// live answers are counted with. Package runtime sets it in its init.
var AnswersOf func(reg any) (a *Answers, countLive bool)

// Len returns how many counters a holds, counted or not: what a leak of
// them would grow.
func (a *Answers) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.counts)
}
