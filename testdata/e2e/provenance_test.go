package e2e

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/breakergen/breakergen/runtime"
)

// The provenance record of SPEC section 6, written by plain wrappers (no
// chain): who answered, the tries, and why the breaker's source did not
// answer, for every shape a plain method takes.

// skip is the one Skip a plain wrapper's record holds when its source did
// not answer, without its error (asserted on its own).
func skip(t *testing.T, p *runtime.Provenance) runtime.Skip {
	t.Helper()
	require.Len(t, p.Skipped, 1, "one source: %s", p)
	s := p.Skipped[0]
	s.Err = nil
	return s
}

func TestPlainWrapperWritesProvenance(t *testing.T) {
	m, w, _ := setup(t)
	ctx, p := runtime.WithProvenance(context.Background())

	m.EXPECT().Quote(ctx, "a").Return(1.0, nil)
	_, err := w.Quote(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, runtime.Provenance{Source: "quotes", Tries: 1}, *p)
	assert.Equal(t, "live", p.String())

	m.EXPECT().Quote(ctx, "a").Return(0.0, errDown)
	_, err = w.Quote(ctx, "a")
	require.ErrorIs(t, err, errDown)
	assert.Equal(t, "", p.Source, "nobody answered")
	assert.Equal(t, 1, p.Tries)
	assert.Equal(t, runtime.Skip{Source: "quotes", Why: "error"}, skip(t, p))
	assert.ErrorIs(t, p.Skipped[0].Err, errDown)
	assert.Equal(t, "none (quotes error)", p.String())

	m.EXPECT().Quote(ctx, "a").Return(0.0, ErrNotFound)
	_, err = w.Quote(ctx, "a")
	require.ErrorIs(t, err, ErrNotFound)
	assert.Equal(t, runtime.Provenance{Source: "quotes", Tries: 1, Skipped: p.Skipped[:0]}, *p,
		"an excluded error is an answer, and the record starts afresh with each call")

	// Trip the breaker (threshold=3): the rejection is written too, with
	// no try spent.
	m.EXPECT().Quote(ctx, "a").Return(0.0, errDown).Times(3)
	for range 3 {
		_, _ = w.Quote(ctx, "a")
	}
	_, err = w.Quote(ctx, "a")
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Equal(t, 0, p.Tries)
	assert.Equal(t, runtime.Skip{Source: "quotes", Why: "open"}, skip(t, p))
	assert.ErrorIs(t, p.Skipped[0].Err, runtime.ErrOpen)
}

func TestPlainWrapperWithoutRecordIsUnchanged(t *testing.T) {
	m, w, _ := setup(t)
	_, p := runtime.WithProvenance(context.Background())
	other := context.Background() // no record: the call writes nowhere
	m.EXPECT().Quote(other, "a").Return(1.0, nil)
	_, err := w.Quote(other, "a")
	require.NoError(t, err)
	assert.Zero(t, *p, "a record is written only by calls made with its ctx")
}

// TestPlainWrapperPanicGivesTheRecordBack: a panicking method leaves the
// record free, so the next call made with the same ctx still writes it.
func TestPlainWrapperPanicGivesTheRecordBack(t *testing.T) {
	m, w, _ := setup(t)
	ctx, p := runtime.WithProvenance(context.Background())
	m.EXPECT().Boom(ctx).DoAndReturn(func(context.Context) error { panic("kaboom") })
	assert.PanicsWithValue(t, "kaboom", func() { _ = w.Boom(ctx) })
	assert.Equal(t, "", p.Source)
	assert.Equal(t, "error", skip(t, p).Why, "the try that panicked: %s", p)

	m.EXPECT().Quote(ctx, "a").Return(1.0, nil)
	_, err := w.Quote(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, "quotes", p.Source, "the record was given back")
}

// TestOutermostPlainCallWritesTheRecord: a guarded call that the wrapped
// method makes with the same ctx leaves the record to the outer call.
func TestOutermostPlainCallWritesTheRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w, reg := setup(t)
		inner, iw := setupUpstream(t, reg)
		ctx, p := runtime.WithProvenance(context.Background())
		inner.EXPECT().Fetch(ctx, "a").Return("", &httpError{404}) // not retryable: one try
		m.EXPECT().Quote(ctx, "a").DoAndReturn(func(ctx context.Context, code string) (float64, error) {
			_, err := iw.Fetch(ctx, code)
			assert.Error(t, err)
			return 2.0, nil
		})
		_, err := w.Quote(ctx, "a")
		require.NoError(t, err)
		assert.Equal(t, runtime.Provenance{Source: "quotes", Tries: 1}, *p, "the inner call's failure is not the outer call's")
	})
}

func TestRetriedPlainWrapperCountsItsTries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry()
		m, w := setupUpstream(t, reg)
		ctx, p := runtime.WithProvenance(context.Background())
		gomock.InOrder(
			m.EXPECT().Fetch(ctx, "a").Return("", &httpError{502}),
			m.EXPECT().Fetch(ctx, "a").Return("quote", nil),
		)
		_, err := w.Fetch(ctx, "a")
		require.NoError(t, err)
		assert.Equal(t, "retried", p.Source)
		assert.Equal(t, 2, p.Tries)
		assert.Empty(t, p.Skipped, "the failed try was retried: the call's source answered")

		m.EXPECT().Fetch(ctx, "b").Return("", errDown).Times(3)
		_, err = w.Fetch(ctx, "b")
		require.ErrorIs(t, err, errDown)
		assert.Equal(t, 3, p.Tries, "counted afresh for this call")
		assert.Equal(t, runtime.Skip{Source: "retried", Why: "error"}, skip(t, p))
	})
}

func TestPlainWrapperStaleAnswerInTheRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockFlows(gomock.NewController(t))
		reg := newRegistry()
		w := NewFlowsBreaker(m, reg)
		ctx, p := runtime.WithProvenance(context.Background())

		// An invalid answer with nothing kept is returned as it is, and the
		// record says nobody answered.
		m.EXPECT().Flow(ctx, "x").Return(Flow{}, nil)
		_, err := w.Flow(ctx, "x")
		require.NoError(t, err)
		assert.Equal(t, runtime.Skip{Source: "flows", Why: "invalid"}, skip(t, p))
		assert.Equal(t, "", p.Source)

		m.EXPECT().Flow(ctx, "x").Return(Flow{Net: 6}, nil)
		_, err = w.Flow(ctx, "x")
		require.NoError(t, err)
		assert.Equal(t, "live", p.String())

		time.Sleep(5 * time.Second)
		m.EXPECT().Flow(ctx, "x").Return(Flow{}, errDown).Times(2)
		for range 2 {
			f, err := w.Flow(ctx, "x")
			require.NoError(t, err)
			assert.Equal(t, 6.0, f.Net)
			assert.Equal(t, "stale 5s (flows error)", p.String())
			assert.True(t, p.Stale)
			assert.Equal(t, 5*time.Second, p.Age)
			assert.Equal(t, 1, p.Tries)
		}
		require.Equal(t, runtime.Open, state(t, reg, "flows"))
		_, err = w.Flow(ctx, "x")
		require.NoError(t, err)
		assert.Equal(t, "stale 5s (flows open)", p.String())
		assert.Equal(t, 0, p.Tries)
	})
}

func TestKeyedPlainWrapperNamesTheKey(t *testing.T) {
	reg := newRegistry()
	w := NewQuotesBreaker(newKeyedFake("bad"), reg)
	ctx, p := runtime.WithProvenance(context.Background())
	_, err := w.Quote(ctx, "good")
	require.NoError(t, err)
	assert.Equal(t, runtime.Provenance{Source: "quote/good", Tries: 1}, *p)

	for range 2 { // threshold=2
		_, err = w.Quote(ctx, "bad")
		require.ErrorIs(t, err, errKeyDown)
		assert.Equal(t, runtime.Skip{Source: "quote/bad", Why: "error"}, skip(t, p))
	}
	_, err = w.Quote(ctx, "bad")
	require.ErrorIs(t, err, runtime.ErrOpen)
	assert.Equal(t, runtime.Skip{Source: "quote/bad", Why: "open"}, skip(t, p))
}

func TestCarrierWritesProvenance(t *testing.T) {
	f := &fakeClient{cmd: NewCmd("v", nil)}
	w := NewClientBreaker(f, newRegistry())
	ctx, p := runtime.WithProvenance(context.Background())
	assert.Equal(t, "v", w.Get(ctx, "k").Val())
	assert.Equal(t, runtime.Provenance{Source: "client", Tries: 1}, *p)

	f.cmd = NewCmd("", errDown)
	assert.ErrorIs(t, w.Get(ctx, "k").Err(), errDown)
	assert.Equal(t, runtime.Skip{Source: "client", Why: "error"}, skip(t, p), "the failure the result carries")

	// A request carries its ctx, and so its record.
	f.resp = &Response{Code: 200}
	rctx, rp := runtime.WithProvenance(context.Background())
	_, err := w.Do(NewRequest(rctx, "/"))
	require.NoError(t, err)
	assert.Equal(t, "roundtrip", rp.Source)
}

// fakePages answers page, or fails with err.
type fakePages struct {
	page string
	err  error
}

func (f *fakePages) Page(*Request) (string, error) { return f.page, f.err }

// TestStaleAnswerOfARequestsCtx: a method whose ctx is its request's
// writes its stale answer in the request ctx's record.
func TestStaleAnswerOfARequestsCtx(t *testing.T) {
	f := &fakePages{page: "p"}
	w := NewPagesBreaker(f, newRegistry())
	ctx, p := runtime.WithProvenance(context.Background())
	req := NewRequest(ctx, "/")
	got, err := w.Page(req)
	require.NoError(t, err)
	assert.Equal(t, "p", got)
	assert.Equal(t, "live", p.String())

	f.page, f.err = "", errDown
	got, err = w.Page(req)
	require.NoError(t, err)
	assert.Equal(t, "p", got, "the kept answer")
	assert.Equal(t, "stale 0s (pages error)", p.String())
}

// TestAnswerWrappingAnInnerRejectionIsAnError: a method that fails with
// the rejection of a guarded call it made itself was called, and failed:
// its breaker did not refuse it, and the record says "error".
func TestAnswerWrappingAnInnerRejectionIsAnError(t *testing.T) {
	m, w, reg := setup(t)
	inner, ok := reg.Lookup("indep")
	require.True(t, ok)
	inner.Isolate("maintenance") // every call of the inner breaker is refused
	ctx, p := runtime.WithProvenance(context.Background())
	m.EXPECT().Quote(ctx, "a").DoAndReturn(func(ctx context.Context, code string) (float64, error) {
		return 0, w.Indep(ctx) // refused, before the mock's Indep is reached
	})
	_, err := w.Quote(ctx, "a")
	require.ErrorIs(t, err, runtime.ErrOpen, "the inner rejection, as the method returned it")
	assert.Equal(t, "none (quotes error)", p.String())
	assert.Equal(t, 1, p.Tries)
}
