package httphealth_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// gatedBody is a request body whose first Read says so (reading) and then
// waits until the test lets it go on (release): a slow client.
type gatedBody struct {
	r                io.Reader
	reading, release chan struct{}
	once             sync.Once
}

func newGatedBody(body string) *gatedBody {
	return &gatedBody{r: strings.NewReader(body), reading: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedBody) Read(p []byte) (int, error) {
	g.once.Do(func() {
		close(g.reading)
		<-g.release
	})
	return g.r.Read(p)
}

// stateOf returns the name and state of a control's answer.
func stateOf(t *testing.T, rec *httptest.ResponseRecorder) (name, state string) {
	t.Helper()
	var st struct{ Name, State string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st), rec.Body.String())
	return st.Name, st.State
}

// callOn makes one call on key of fam and reports whether it went through.
func callOn(fam *runtime.Family, key string) (called bool, err error) {
	err = fam.Breaker(key).Do(context.Background(), func(context.Context) error { called = true; return nil })
	return called, err
}

// TestControlKeyDroppedWhileTheBodyComes: a family's key dropped while a
// slow client sends the body of its isolate request is isolated all the
// same, as the key's live breaker (made again): the answer says ISOLATED
// and calls on the key are refused, where the handler once looked the
// breaker up before reading the body and isolated the dropped one.
func TestControlKeyDroppedWhileTheBodyComes(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(authorize))
	fam := f.reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{Keys: 100})
	fam.Breaker("x")

	body := newGatedBody("reason=maintenance")
	req := httptest.NewRequest("POST", "/health/datasources/quote/x/isolate", body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", token)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.h.ServeHTTP(rec, req)
	}()
	<-body.reading
	for i := range 1000 {
		fam.Breaker("k" + strconv.Itoa(i))
	}
	_, ok := f.reg.Lookup("quote/x")
	require.False(t, ok, "x was dropped while the body came")
	close(body.release)
	<-done

	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	name, state := stateOf(t, rec)
	assert.Equal(t, "quote/x", name)
	assert.Equal(t, "ISOLATED", state)
	live, ok := f.reg.Lookup("quote/x")
	require.True(t, ok, "the key was made again to take the mode")
	assert.Equal(t, runtime.Isolated, live.State())
	called, err := callOn(fam, "x")
	assert.ErrorIs(t, err, runtime.ErrOpen, "a call on the key is refused")
	assert.False(t, called)
	assert.Equal(t, "quote/x", f.reg.Events(1)[0].Source)
}

// TestControlMakesAKeyWithinABound: isolate and bypass of a family's key
// that is not live make it, in the mode. Keys in a mode are never
// dropped, so a key goes into a mode only while the family holds fewer
// keys in a mode than its bound (409 past it); a key in a mode already
// may change its mode or reason.
func TestControlMakesAKeyWithinABound(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(authorize))
	fam := f.reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{Keys: 2})

	rec := f.control("POST", "/health/datasources/quote/a/isolate", ptr("before its first call"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, state := stateOf(t, rec)
	assert.Equal(t, "ISOLATED", state)
	called, err := callOn(fam, "a")
	assert.ErrorIs(t, err, runtime.ErrOpen)
	assert.False(t, called)

	fam.Breaker("b")
	rec = f.control("POST", "/health/datasources/quote/b/bypass", ptr("a live key"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	for _, key := range []string{"c", "d"} { // not live, and live
		if key == "d" {
			fam.Breaker("d")
		}
		rec = f.control("POST", "/health/datasources/quote/"+key+"/isolate", ptr("one too many"))
		assert.Equal(t, http.StatusConflict, rec.Code, key)
		assert.Contains(t, errorOf(t, rec), `family "quote" holds 2 keys an operator put in a mode`)
		if b, ok := fam.Lookup(key); ok {
			assert.Equal(t, runtime.Closed, b.State(), "nothing changed")
		}
	}
	rec = f.control("POST", "/health/datasources/quote/a/bypass", ptr("a key in a mode may change it"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = f.control("POST", "/health/datasources/quote/b/resume", ptr("done"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = f.control("POST", "/health/datasources/quote/c/isolate", ptr("room again"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestControlBoundSkipsEnvModeKeys: the bound counts only the keys an
// operator put in a mode. Keys BREAKER_<FAMILY>_MODE put in one are
// dropped like CLOSED ones, so they fill no memory: isolating a new key
// of a family whose variable bypasses every key, at its bound, is let
// through. Before, they were counted, and the isolate answered 409.
func TestControlBoundSkipsEnvModeKeys(t *testing.T) {
	t.Setenv("BREAKER_QUOTE_MODE", "bypass")
	f := newFixture(t, httphealth.WithControl(authorize))
	fam := f.reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{Keys: 4})
	for i := range 50 {
		fam.Breaker("k" + strconv.Itoa(i))
	}
	require.Equal(t, fam.Limit(), fam.Len(), "the family is at its bound, every key BYPASSED")

	rec := f.control("POST", "/health/datasources/quote/bad/isolate", ptr("bad upstream"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, state := stateOf(t, rec)
	assert.Equal(t, "ISOLATED", state)
}

// TestControlEnvModeKeyTakesTheBound: a live key in the mode the
// environment gave it is not pinned yet, so isolating it takes the bound
// like a CLOSED key. Before, it counted as "in a mode already" and skipped
// the bound: with traffic making keys, every isolate was let through and
// the family grew to 100 pinned keys for a bound of 4.
func TestControlEnvModeKeyTakesTheBound(t *testing.T) {
	t.Setenv("BREAKER_QUOTE_MODE", "isolate")
	f := newFixture(t, httphealth.WithControl(authorize))
	fam := f.reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{Keys: 4})
	ok := 0
	for i := range 100 {
		key := "k" + strconv.Itoa(i)
		fam.Breaker(key) // traffic
		rec := f.control("POST", "/health/datasources/quote/"+key+"/isolate", ptr("pin"))
		switch rec.Code {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
		default:
			t.Fatalf("isolate %s: %d %s", key, rec.Code, rec.Body.String())
		}
	}
	assert.Equal(t, fam.Limit(), ok, "as many keys pinned as the bound")
	assert.LessOrEqual(t, fam.Len(), 2*fam.Limit(), "pinned keys and the bound's own")
}

// TestControlHookControlsAnotherKey: a hook of the mode's Event may send
// another control to the same handler, as a hook that isolates a key's
// followers does. Before, the handler held its lock while the mode's
// hooks ran, so the hook's request waited until its client gave up.
func TestControlHookControlsAnotherKey(t *testing.T) {
	var url string
	status := make(chan string, 1)
	hook := runtime.OnStateChange(func(ev runtime.Event) {
		if ev.Source != "quote/a" || ev.To != runtime.Isolated {
			return
		}
		req, err := http.NewRequest("POST", url+"/health/datasources/quote/b/isolate", strings.NewReader("reason=follows+a"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", token)
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			status <- err.Error()
			return
		}
		resp.Body.Close()
		status <- resp.Status
	})
	reg := runtime.NewRegistry(runtime.WithoutEnv(), hook, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	srv := httptest.NewServer(httphealth.New(reg, httphealth.WithControl(authorize)))
	defer srv.Close()
	url = srv.URL
	fam := reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{Keys: 4})
	fam.Breaker("a")
	fam.Breaker("b")

	req, err := http.NewRequest("POST", srv.URL+"/health/datasources/quote/a/isolate", strings.NewReader("reason=down"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "200 OK", <-status, "the hook's request")
	b, ok := fam.Lookup("b")
	require.True(t, ok)
	assert.Equal(t, runtime.Isolated, b.State())
}

// noteSharer starts quote/x ISOLATED when it is made, as package
// redisstate does from the fleet's note of a mode (read in Created), and
// records the modes this process sends.
type noteSharer struct {
	mu    sync.Mutex
	modes []string
}

func (s *noteSharer) Created(b *runtime.Breaker) {
	if b.Name() == "quote/x" {
		b.PeerMode("p1", runtime.Isolated, "isolated by operator: fleet-wide")
	}
}
func (s *noteSharer) Transition(*runtime.Breaker, runtime.Event, time.Duration) {}
func (s *noteSharer) Probe(*runtime.Breaker) (bool, time.Duration)              { return true, 0 }
func (s *noteSharer) Wait(context.Context, *runtime.Limiter, time.Duration) (bool, error) {
	return false, nil
}
func (s *noteSharer) Health() runtime.FleetHealth { return runtime.FleetHealth{} }
func (s *noteSharer) Mode(b *runtime.Breaker, m runtime.State, _ string) {
	s.mu.Lock()
	s.modes = append(s.modes, b.Name()+" "+m.String())
	s.mu.Unlock()
}

// TestControlResumesAKeyNotLive: resume of a key that is not live makes
// it and resumes it, as Resume through a dropped *Breaker does: the key's
// next breaker may start in a mode (the fleet's, read as it is made), and
// only a Resume ends one (SPEC §14). Before, it answered 404 and ended
// nothing: the next call on the key was refused.
func TestControlResumesAKeyNotLive(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(authorize))
	sh := &noteSharer{}
	stop, err := f.reg.Share(sh)
	require.NoError(t, err)
	defer stop()
	fam := f.reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{Keys: 4})

	rec := f.control("POST", "/health/datasources/quote/x/resume", ptr("upstream is back"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, state := stateOf(t, rec)
	assert.Equal(t, "CLOSED", state)
	called, err := callOn(fam, "x")
	require.NoError(t, err)
	assert.True(t, called, "the operator's Resume ended the fleet's mode")
	sh.mu.Lock()
	assert.Equal(t, []string{"quote/x CLOSED"}, sh.modes, "and the fleet hears of it")
	sh.mu.Unlock()

	for i := range 100 { // the keys it makes are CLOSED: the family drops them
		rec := f.control("POST", "/health/datasources/quote/r"+strconv.Itoa(i)+"/resume", ptr("start over"))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	assert.LessOrEqual(t, fam.Len(), fam.Limit())
}

// TestControlBoundHoldsUnderConcurrentIsolates: requests that isolate
// new keys at once take the bound's slots one at a time, so no more keys
// are pinned than the bound, now that a request acts without the lock.
func TestControlBoundHoldsUnderConcurrentIsolates(t *testing.T) {
	f := newFixture(t, httphealth.WithControl(authorize))
	fam := f.reg.Family(runtime.Config{Name: "quote"}, runtime.FamilyConfig{Keys: 4})
	var wg sync.WaitGroup
	codes := make([]int, 64)
	for i := range codes {
		wg.Go(func() {
			codes[i] = f.control("POST", "/health/datasources/quote/k"+strconv.Itoa(i)+"/isolate", ptr("at once")).Code
		})
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		if c == http.StatusOK {
			ok++
		}
	}
	assert.Equal(t, fam.Limit(), ok)
	pinned := 0
	for _, b := range fam.Breakers() {
		if b.Mode() != runtime.Closed {
			pinned++
		}
	}
	assert.Equal(t, fam.Limit(), pinned)
}
