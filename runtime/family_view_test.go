package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	br "github.com/breakergen/breakergen/runtime"
)

func TestFamilyViews(t *testing.T) {
	reg := quietRegistry()
	q := reg.Family(br.Config{Name: "quote", FailureThreshold: 1}, br.FamilyConfig{Keys: 10})
	qa := reg.Family(br.Config{Name: "quote/a"}, br.FamilyConfig{Keys: 10})
	api := reg.Family(br.Config{Name: "api"}, br.FamilyConfig{})
	assert.Equal(t, []*br.Family{api, q, qa}, reg.Families(), "name order")
	assert.Equal(t, br.DefaultFamilyKeys, api.Limit())
	assert.Equal(t, "quote", q.Config().Name)

	for name, want := range map[string]struct {
		f   *br.Family
		key string
	}{
		"quote/600519": {q, "600519"},
		"quote/a/b":    {qa, "b"}, // the longest family name wins
		"quote/a":      {q, "a"},
		"api/x/y":      {api, "x/y"},
		"quote":        {nil, ""},
		"quote/":       {q, ""},  // the key "": a request without a host, say
		"quote/a/":     {qa, ""}, // the longest family name wins
		"quotes/1":     {nil, ""},
		"plain":        {nil, ""},
	} {
		f, key := reg.FamilyOf(name)
		assert.Same(t, want.f, f, name)
		assert.Equal(t, want.key, key, name)
	}

	reg.Breaker(br.Config{Name: "plain/x"})
	qa.Breaker("k")
	api.Breaker("") // "api/", a key too
	api.Breaker("h/1")
	var plain []string
	for _, b := range reg.PlainBreakers() {
		plain = append(plain, b.Name())
	}
	assert.Equal(t, []string{"plain/x"}, plain, "the key breakers left out")

	_, ok := q.Lookup("b")
	assert.False(t, ok, "not live: Lookup creates nothing")
	assert.Equal(t, 0, q.Len())
	q.Breaker("b")
	q.Breaker("a")
	b, ok := q.Lookup("b")
	require.True(t, ok)
	assert.Equal(t, "quote/b", b.Name())
	var names []string
	for _, b := range q.Breakers() {
		names = append(names, b.Name())
	}
	assert.Equal(t, []string{"quote/a", "quote/b"}, names)
}

// TestFamilyTotalsKeepDroppedKeys: a family's totals hold what its
// dropped keys counted, so they never go down as keys come and go.
func TestFamilyTotalsKeepDroppedKeys(t *testing.T) {
	reg := quietRegistry(br.WithCallCounts())
	f := reg.Family(br.Config{Name: "f", FailureThreshold: 100}, br.FamilyConfig{Keys: 3})
	var last br.FamilyTotals
	for i := range 20 {
		b := f.Breaker(fmt.Sprint("k", i))
		failOn(b)
		require.NoError(t, b.Do(context.Background(), func(context.Context) error { return nil }))
		tot := f.Totals()
		assert.Equal(t, uint64(i+1), tot.Failures, "after key %d", i)
		assert.Equal(t, uint64(i+1), tot.Successes)
		assert.Equal(t, uint64(2*(i+1)), tot.Calls)
		assert.GreaterOrEqual(t, tot.Failures, last.Failures)
		assert.Equal(t, min(i+1, 3), tot.Keys)
		assert.Equal(t, tot.Keys, tot.ByState[br.Closed])
		assert.True(t, tot.Counted)
		assert.Equal(t, "f", tot.Name)
		last = tot
	}
	assert.Equal(t, uint64(17), f.Health().Dropped)
}

func TestFamilyTotalsCountOpenKeysAndTransitions(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f", FailureThreshold: 1}, br.FamilyConfig{Keys: 10})
	failOn(f.Breaker("a"))
	failOn(f.Breaker("b"))
	f.Breaker("c")
	tot := f.Totals()
	assert.Equal(t, 3, tot.Keys)
	assert.Equal(t, 2, tot.ByState[br.Open])
	assert.Equal(t, 1, tot.ByState[br.Closed])
	assert.Equal(t, uint64(2), tot.Transitions[br.Closed][br.Open])
	assert.False(t, tot.Counted)
}

// TestFamilyTotalsMonotonicUnderChurn reads a family's totals while keys
// come, count a failure and are dropped: no reading is below the one
// before it, and the last is exact.
func TestFamilyTotalsMonotonicUnderChurn(t *testing.T) {
	reg := quietRegistry()
	f := reg.Family(br.Config{Name: "f", FailureThreshold: 1 << 30}, br.FamilyConfig{Keys: 8})
	const writers, per = 4, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				k := f.Enter(fmt.Sprint(w, "/", i)) // held: not dropped before the failure counts
				failOn(k.Breaker())
				k.Done()
			}
		})
	}
	stop := make(chan struct{})
	var readErr error
	var rd sync.WaitGroup
	rd.Go(func() {
		var last uint64
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := f.Totals().Failures; n < last {
				readErr = fmt.Errorf("failures went down: %d after %d", n, last)
				return
			} else {
				last = n
			}
		}
	})
	wg.Wait()
	close(stop)
	rd.Wait()
	require.NoError(t, readErr)
	assert.Equal(t, uint64(writers*per), f.Totals().Failures)
}

// BenchmarkFamilyNewKeyChurn is the cost of a new key through a full
// family (keys=1000): every call makes a key and drops the least recently
// used one, folding its counters into the family's totals.
func BenchmarkFamilyNewKeyChurn(b *testing.B) {
	f := quietRegistry().Family(br.Config{Name: "f"}, br.FamilyConfig{Keys: 1000})
	var i int64
	for b.Loop() {
		f.EnterInt(i).Done()
		i++
	}
}
