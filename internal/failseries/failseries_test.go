package failseries

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFailureSeries: the failure series is Failures − Injected clamped at
// 0, held at the most it has been while no counter of its breaker goes
// down, and follows a reset; a series no longer scraped is forgotten.
func TestFailureSeries(t *testing.T) {
	type reading struct {
		failures, injected, other uint64 // other: a counter only a reset turns down
		want                      uint64
	}
	for _, tt := range []struct {
		name     string
		readings []reading
	}{
		{"injected above failures: 0, not 1.8e19", []reading{{0, 1, 0, 0}, {1, 1, 0, 0}}},
		{"a dip is held", []reading{{3, 0, 5, 3}, {4, 2, 5, 3}, {4, 1, 5, 3}, {5, 1, 6, 4}}},
		{"held until the difference passes it", []reading{{5, 0, 0, 5}, {5, 5, 0, 5}, {9, 5, 0, 5}, {11, 5, 0, 6}}},
		{"a reset is followed", []reading{{5, 1, 9, 4}, {2, 0, 0, 2}, {2, 1, 0, 2}}},
		{"a reset seen in another counter", []reading{{5, 1, 9, 4}, {6, 4, 1, 2}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s Series
			k := key{name: "x"}
			for i, r := range tt.readings {
				var got uint64
				s.scrape(func(failure func(key, [9]uint64) uint64) {
					got = failure(k, [9]uint64{r.failures, r.injected, r.other})
				})
				assert.Equal(t, r.want, got, "reading %d: %+v", i, r)
			}
		})
	}

	var s Series
	breaker, family := key{name: "x"}, key{family: true, name: "x"}
	s.scrape(func(failure func(key, [9]uint64) uint64) {
		assert.Equal(t, uint64(4), failure(breaker, [9]uint64{4}))
		assert.Equal(t, uint64(7), failure(family, [9]uint64{7}))
	})
	s.scrape(func(failure func(key, [9]uint64) uint64) {
		assert.Equal(t, uint64(7), failure(family, [9]uint64{7, 1}), "a family is not the breaker of its name")
	})
	assert.NotContains(t, s.last, breaker, "forgotten once not read")
	assert.Len(t, s.last, 1)
}
