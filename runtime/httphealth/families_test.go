package httphealth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// familyFixture is a registry with two breakers and a family "quote" of n
// keys, k00000 to k<n-1>, the key open OPEN; the family keeps up to 10,000.
func familyFixture(t *testing.T, n int, open string) *fixture {
	t.Helper()
	f := newFixture(t)
	f.reg.Breaker(runtime.Config{Name: "tdx"})
	f.reg.Breaker(runtime.Config{Name: "eastmoney"})
	fam := f.reg.Family(runtime.Config{Name: "quote", FailureThreshold: 1, ResetTimeout: time.Minute},
		runtime.FamilyConfig{Keys: 10000, MaxOpen: 50})
	for i := range n {
		fam.Breaker(fmt.Sprintf("k%05d", i))
	}
	fail(t, fam.Breaker(open), 1, "symbol page broken")
	return f
}

func TestPagedAnswerShowsAFamilyAsOneRow(t *testing.T) {
	f := familyFixture(t, 300, "k00123")
	p := f.page(t, "page=1")
	assert.Equal(t, []string{"eastmoney", "tdx"}, names(p), "the keys are not in the list of breakers")
	require.Len(t, p.Families, 1)
	fam := p.Families[0]
	assert.Equal(t, "quote", fam.Name)
	assert.Equal(t, 300, fam.Keys)
	assert.Equal(t, 10000, fam.Limit)
	assert.Equal(t, 1, fam.Open)
	assert.Equal(t, 50, fam.MaxOpen)
	assert.Equal(t, runtime.Open, fam.State, "the worst key's state")
	assert.Equal(t, runtime.LevelDown, fam.Status)
	assert.Equal(t, map[string]int{"down": 1, "degraded": 0, "ok": 299}, fam.Counts)
	assert.Equal(t, 3, p.Total, "two breakers and one family")
	assert.Equal(t, map[string]int{"down": 1, "degraded": 0, "ok": 2}, p.Counts)
	assert.Equal(t, runtime.LevelDown, p.Status)

	// A search matches families by name too, and by a key's name as the
	// timeline shows it ("quote/k00007" found nothing).
	assert.Empty(t, f.page(t, "q=tdx").Families)
	assert.Len(t, f.page(t, "q=QUO").Families, 1)
	assert.Len(t, f.page(t, "q=quote/k00007").Families, 1)

	// The unpaged answer is runtime.Health, every key included.
	rec := f.serve(http.MethodGet, "/health/datasources")
	var h runtime.Health
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &h))
	assert.Len(t, h.Breakers, 302)
}

func TestPagedAnswerOfAFamilysKeys(t *testing.T) {
	f := familyFixture(t, 10000, "k07342")
	p := f.page(t, "family=quote")
	assert.Equal(t, "quote", p.Family)
	assert.Equal(t, 10000, p.Total)
	assert.Equal(t, 200, p.Pages, "50 a page")
	require.Len(t, p.Breakers, 50)
	assert.Equal(t, "quote/k07342", p.Breakers[0].Name, "the OPEN key first")
	assert.Equal(t, runtime.Open, p.Breakers[0].State)
	assert.Equal(t, "quote/k00000", p.Breakers[1].Name)
	assert.Empty(t, p.Families)

	last := f.page(t, "family=quote&page=200")
	require.Len(t, last.Breakers, 50)
	assert.Equal(t, "quote/k09999", last.Breakers[49].Name)
	assert.Equal(t, 200, f.page(t, "family=quote&page=999").Page, "past the last page: the last")

	found := f.page(t, "family=quote&q=k0999")
	assert.Equal(t, 10, found.Matched)
	assert.Equal(t, "quote/k09990", found.Breakers[0].Name)
	// A key's search reads the key: the family's name, in every key's
	// name, matched all 10,000.
	assert.Zero(t, f.page(t, "family=quote&q=quote").Matched)
	assert.Equal(t, 1, f.page(t, "family=quote&q=K07342").Matched)
	assert.Equal(t, 1, f.page(t, "family=quote&q=quote/k07342").Matched, "a key's full name, as the timeline shows it")
}

func TestPagedAnswerRefusesABadFamily(t *testing.T) {
	f := familyFixture(t, 3, "k00001")
	for query, want := range map[string]struct {
		code int
		msg  string
	}{
		"family=nope":                        {http.StatusNotFound, `no family of per-key breakers called "nope"`},
		"family=quote&family=quote":          {http.StatusBadRequest, "family given 2 times; give it once"},
		"family=":                            {http.StatusBadRequest, "family is empty; give the name of a family of per-key breakers"},
		"family=quote&page=0":                {http.StatusBadRequest, `page "0" is not 1 or more`},
		"family=" + strings.Repeat("x", 300): {http.StatusNotFound, `no family of per-key breakers called "` + strings.Repeat("x", 300) + `"`},
	} {
		rec := f.serve(http.MethodGet, "/health/datasources?"+query)
		assert.Equal(t, want.code, rec.Code, query)
		assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"), query)
		var body struct{ Error string }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), query)
		assert.Equal(t, want.msg, body.Error, query)
	}
}

func TestDashboardRendersAFamilyRow(t *testing.T) {
	f := familyFixture(t, 40, "k00007")
	page := f.dashboard(t)
	row := regexp.MustCompile(`(?s)<li class="family" data-family="quote".*?</li>`).FindString(page)
	require.NotEmpty(t, row, "a row for the family")
	assert.Contains(t, row, `data-state="OPEN" data-level="down"`)
	assert.Contains(t, row, `<dd data-f="keys">40 of 10000</dd>`)
	assert.Contains(t, row, `<dd data-f="levels">1 down, 0 degraded, 39 ok</dd>`)
	assert.Contains(t, row, `<dd data-f="open">1 (maxopen 50%)</dd>`)
	assert.Contains(t, row, `<dd data-f="dropped">0</dd>`)
	assert.Contains(t, row, `aria-expanded="false" disabled`, "the script expands it")
	assert.NotContains(t, page, `<li class="card" data-name="quote/`, "no card per key")
	assert.Contains(t, page, "3 sources: 1 down, 0 degraded, 2 ok.")
}

// TestLongNamesAreServed: every name the runtime takes is one the
// endpoints take: a family or a breaker named in 300 bytes has its page
// and its events, and a search of 100 Chinese characters (300 bytes, as
// many as the dashboard's field takes) is a search. Names were refused
// past 256 bytes: the dashboard's own requests for such a breaker's band
// or such a family's keys failed, and with them every refresh of the page.
func TestLongNamesAreServed(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("长", 100) // 300 bytes
	fam := f.reg.Family(runtime.Config{Name: long, FailureThreshold: 1}, runtime.FamilyConfig{Keys: 10})
	fail(t, fam.Breaker("k"), 1, "502")
	b := f.reg.Breaker(runtime.Config{Name: "b" + long, FailureThreshold: 1})
	fail(t, b, 1, "502")

	keys := f.page(t, "family="+url.QueryEscape(long))
	assert.Equal(t, []string{long + "/k"}, names(keys))
	evs, _ := f.eventsAt(t, "source="+url.QueryEscape("b"+long))
	require.Len(t, evs, 1)
	assert.Equal(t, "b"+long, evs[0].Source)
	found := f.page(t, "q="+url.QueryEscape(long))
	assert.Equal(t, []string{"b" + long}, names(found))
	require.Len(t, found.Families, 1)
	assert.Equal(t, long, found.Families[0].Name)

	rec := f.serve(http.MethodGet, "/health/datasources?q="+strings.Repeat("x", 257))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "q is 257 characters long; give at most 256")
}

// TestKeySearchNestedAndDisplayNames: a key's name finds the family whose
// name is the longest prefix of it (not "quote" beside "quote/sub"), and
// on a family's page a display name matches only a key it is given for:
// displayName falls back to the family's own ("eastmoney" for
// "eastmoney_quote/..."), which matched every key.
func TestKeySearchNestedAndDisplayNames(t *testing.T) {
	f := newFixture(t, httphealth.WithDisplayName("eastmoney", "东方财富"), httphealth.WithDisplayName("eastmoney_quote/k2", "贵州茅台"))
	f.reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{Keys: 10}).Breaker("a")
	f.reg.Family(runtime.Config{Name: "quote/sub"}, runtime.FamilyConfig{Keys: 10}).Breaker("x")
	em := f.reg.Family(runtime.Config{Name: "eastmoney_quote"}, runtime.FamilyConfig{Keys: 10})
	em.Breaker("k1")
	em.Breaker("k2")

	var rows []string
	for _, r := range f.page(t, "q="+url.QueryEscape("quote/sub/x")).Families {
		rows = append(rows, r.Name)
	}
	assert.Equal(t, []string{"quote/sub"}, rows)

	assert.Zero(t, f.page(t, "family=eastmoney_quote&q="+url.QueryEscape("东方")).Matched)
	assert.Equal(t, []string{"eastmoney_quote/k2"}, names(f.page(t, "family=eastmoney_quote&q="+url.QueryEscape("茅台"))))

	// A key as the timeline shows it, its family's display name first,
	// finds the key, on the main page (its family) and the family's.
	var found []string
	for _, r := range f.page(t, "q="+url.QueryEscape("东方财富/k1")).Families {
		found = append(found, r.Name)
	}
	assert.Equal(t, []string{"eastmoney_quote"}, found)
	assert.Equal(t, []string{"eastmoney_quote/k1"}, names(f.page(t, "family=eastmoney_quote&q="+url.QueryEscape("东方财富/k1"))))
}
