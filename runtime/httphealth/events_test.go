package httphealth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// eventsAt gets the events answer for query and decodes it.
func (f *fixture) eventsAt(t *testing.T, query string) ([]runtime.Event, http.Header) {
	t.Helper()
	rec := f.serve(http.MethodGet, "/health/degradation-events?"+query)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assertCommonHeaders(t, rec)
	var evs []runtime.Event
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &evs))
	return evs, rec.Header()
}

func sources(evs []runtime.Event) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.Source+" "+ev.To.String())
	}
	return out
}

// TestEventsFiltered: since and source pick the events of some breakers
// over a span of time, as the dashboard's state band asks for them.
func TestEventsFiltered(t *testing.T) {
	f := newFixture(t)
	tdx := f.reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: 30 * time.Second})
	em := f.reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: 30 * time.Second})
	sina := f.reg.Breaker(runtime.Config{Name: "fallback:sina", FailureThreshold: 1, ResetTimeout: 30 * time.Second})
	fail(t, tdx, 1, "old")        // 09:30:00
	f.clock.Add(10 * time.Minute) // 09:40:00
	fail(t, em, 1, "403")         // 09:40:00
	f.clock.Add(30 * time.Second) // 09:40:30: both HALF_OPEN
	require.Equal(t, runtime.HalfOpen, em.State())
	require.Equal(t, runtime.HalfOpen, tdx.State())
	fail(t, sina, 1, "502") // 09:40:30
	succeed(t, em)          // 09:40:30

	evs, hd := f.eventsAt(t, "since=2026-10-06T09:40:00Z")
	assert.Equal(t, []string{"eastmoney CLOSED", "fallback:sina OPEN", "tdx HALF_OPEN", "eastmoney HALF_OPEN", "eastmoney OPEN"},
		sources(evs), "at or after since, newest first")
	assert.Empty(t, hd.Get(httphealth.MoreEventsHeader))

	evs, _ = f.eventsAt(t, "since=2026-10-06T17:40:00.5%2B08:00")
	assert.Equal(t, []string{"eastmoney CLOSED", "fallback:sina OPEN", "tdx HALF_OPEN", "eastmoney HALF_OPEN"},
		sources(evs), "any zone and precision")

	evs, _ = f.eventsAt(t, "source=tdx&source=fallback:sina")
	assert.Equal(t, []string{"fallback:sina OPEN", "tdx HALF_OPEN", "tdx OPEN"}, sources(evs))

	evs, _ = f.eventsAt(t, "source=tdx&since=2026-10-06T09:35:00Z")
	assert.Equal(t, []string{"tdx HALF_OPEN"}, sources(evs))

	evs, _ = f.eventsAt(t, "source=nobody")
	assert.Empty(t, evs)

	evs, hd = f.eventsAt(t, "source=eastmoney&limit=2")
	assert.Equal(t, []string{"eastmoney CLOSED", "eastmoney HALF_OPEN"}, sources(evs))
	assert.Equal(t, "true", hd.Get(httphealth.MoreEventsHeader), "one more matches")

	evs, hd = f.eventsAt(t, "source=eastmoney&limit=3")
	assert.Len(t, evs, 3)
	assert.Empty(t, hd.Get(httphealth.MoreEventsHeader), "all that match")

	// Without a filter, the header says whether the log holds more.
	_, hd = f.eventsAt(t, "limit=6")
	assert.Empty(t, hd.Get(httphealth.MoreEventsHeader))
	_, hd = f.eventsAt(t, "limit=5")
	assert.Equal(t, "true", hd.Get(httphealth.MoreEventsHeader))

	rec := f.serve(http.MethodHead, "/health/degradation-events?source=eastmoney&limit=1")
	assert.Equal(t, "true", rec.Header().Get(httphealth.MoreEventsHeader), "HEAD too")

	// The handler's most per answer bounds a filtered answer too.
	rec = httptest.NewRecorder()
	httphealth.New(f.reg, httphealth.WithMaxLimit(1)).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health/degradation-events?source=tdx&limit=100", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var one []runtime.Event
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &one))
	assert.Len(t, one, 1)
	assert.Equal(t, "true", rec.Header().Get(httphealth.MoreEventsHeader))
}

// TestEventsPaged: page N of limit events, newest first, with
// X-More-Events on every page but the last, filtered or not.
func TestEventsPaged(t *testing.T) {
	f := manyEvents(t, 100, 10) // eastmoney: OPEN, HALF_OPEN, OPEN, ... 10 events, one a second
	tdx := f.reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1})
	fail(t, tdx, 1, "down") // the newest of all
	times := func(evs []runtime.Event) []string {
		out := []string{}
		for _, ev := range evs {
			out = append(out, ev.Source+" "+ev.Time.UTC().Format("05"))
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []string
		more  bool
	}{
		{"limit=4", []string{"tdx 05", "eastmoney 05", "eastmoney 04", "eastmoney 04"}, true},
		{"limit=4&page=2", []string{"eastmoney 03", "eastmoney 03", "eastmoney 02", "eastmoney 02"}, true},
		{"limit=4&page=3", []string{"eastmoney 01", "eastmoney 01", "eastmoney 00"}, false},
		{"limit=4&page=4", []string{}, false},
		{"limit=4&page=99999999999999999999", []string{}, false},
		{"source=eastmoney&limit=4&page=3", []string{"eastmoney 01", "eastmoney 00"}, false},
		{"source=eastmoney&limit=4&page=2", []string{"eastmoney 03", "eastmoney 02", "eastmoney 02", "eastmoney 01"}, true},
		{"source=eastmoney&since=2026-10-06T09:30:03Z&limit=4&page=2", []string{"eastmoney 03"}, false},
		{"source=eastmoney&limit=4&page=99999999999999999999", []string{}, false},
	} {
		evs, hd := f.eventsAt(t, tc.query)
		assert.Equal(t, tc.want, times(evs), tc.query)
		assert.Equal(t, tc.more, hd.Get(httphealth.MoreEventsHeader) == "true", tc.query)
	}
	for _, tc := range []struct{ query, mention string }{
		{"page=0", `"0"`},
		{"page=x&source=a", `"x"`},
		{"page=1&page=2", "2 times"},
	} {
		rec := f.serve(http.MethodGet, "/health/degradation-events?"+tc.query)
		require.Equal(t, http.StatusBadRequest, rec.Code, tc.query)
		var body map[string]string
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.Contains(t, body["error"], tc.mention, tc.query)
	}
}

func TestEventsFilterBadInput(t *testing.T) {
	f := newFixture(t)
	many := url.Values{}
	for i := range 51 {
		many.Add("source", fmt.Sprintf("s%d", i))
	}
	for _, tc := range []struct{ query, mention string }{
		{"since=yesterday", `"yesterday"`},
		{"since=", `""`},
		{"since=2026-10-06", `"2026-10-06"`},
		{"since=2026-10-06T09:30:00", "RFC 3339"},
		{"since=2026-10-06T09:30:00Z&since=2026-10-06T09:31:00Z", "2 times"},
		{"source=", "source is empty"},
		{"source=a&source=", "source is empty"},
		{many.Encode(), "51 times"},
		{"source=a&limit=x", `"x"`},
	} {
		rec := f.serve(http.MethodGet, "/health/degradation-events?"+tc.query)
		require.Equal(t, http.StatusBadRequest, rec.Code, tc.query)
		assertCommonHeaders(t, rec)
		var body map[string]string
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.Contains(t, body["error"], tc.mention, tc.query)
	}
	fifty := url.Values{}
	for i := range 50 {
		fifty.Add("source", fmt.Sprintf("s%d", i))
	}
	rec := f.serve(http.MethodGet, "/health/degradation-events?"+fifty.Encode())
	assert.Equal(t, http.StatusOK, rec.Code, "one page's breakers")
}
