package httphealth

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/breakergen/breakergen/runtime"
)

// The actions of the controls (SPEC §14): the last element of
// POST PathDatasources/{name}/{action}.
const (
	ActionIsolate = "isolate"
	ActionBypass  = "bypass"
	ActionResume  = "resume"
)

// maxControlBody bounds the form of a control request: a reason is cut to
// 200 characters anyway.
const maxControlBody = 8 << 10

// control is what [WithControl] turns on.
type control struct {
	authorize func(*http.Request) error
	cop       *http.CrossOriginProtection
	// modeMu guards pending: for each family, the requests that took a
	// slot of its bound of pinned keys and have not ended yet
	// (controlTarget). It is never held while a request acts, so that
	// the mode's hooks, and a Sharer's Created for a key made, may send
	// controls themselves.
	modeMu  sync.Mutex
	pending map[*runtime.Family]int
}

// WithControl turns on the operator's controls (SPEC §14): POST
// PathDatasources/{name}/isolate, /bypass and /resume, with a form field
// reason (required), call [runtime.Breaker.Isolate], Bypass and Resume on
// the breaker called name, and the dashboard shows a reason field and
// three buttons on each breaker. Without this option those paths answer
// 404 Not Found and the dashboard shows no control.
//
// Each control request is checked in this order: the method must be POST
// (405 otherwise); the request must not come from another site, which
// [http.CrossOriginProtection] decides from its Sec-Fetch-Site and Origin
// headers (403); authorize must return nil (403 with its error's text
// otherwise: check the caller's credentials there, the handler has none
// of its own); the request must carry no query parameter (400: a reason
// in the URL is not read) and a body of type
// application/x-www-form-urlencoded or multipart/form-data (415
// otherwise) whose one field is reason (400 for another, as a GET endpoint
// refuses a parameter it does not read; a query parameter or field whose
// name starts with "_" is let through); the reason must not be empty once
// cleaned as every reason is (one line, control characters replaced, at
// most 200 characters; 400); then the breaker must exist (404), looked up
// once the body is read, so that a slow body cannot leave the request
// acting on a family's key dropped meanwhile.
//
// A name "<family>/<key>" of a [runtime.Family] acts on the key's live
// breaker, held meanwhile as a call holds it, making a key that is not
// live, as [runtime.Breaker.Resume] through a dropped *Breaker does: an
// operator may isolate a key before its first call, and resume one whose
// next breaker would start in a mode (a fleet's, or the environment's).
// A key an operator put in a mode is never dropped, so isolate and bypass
// are refused (409 Conflict) for a key not in such a mode yet while the
// family holds as many keys in one as its bound of live keys (keys in the
// mode BREAKER_<NAME>_MODE gave them are dropped like CLOSED ones, and
// not counted).
//
// A refused request changes nothing. The answer is the breaker's
// [runtime.Stats] after the change, as JSON. A nil authorize is ignored:
// the controls stay off.
func WithControl(authorize func(*http.Request) error) Option {
	return func(h *Handler) {
		if authorize != nil {
			h.ctl = &control{authorize: authorize, cop: http.NewCrossOriginProtection()}
		}
	}
}

// controlPath splits PathDatasources/{name}/{action} when the controls are
// on; ok is false for every other path, and for every path without them.
func (h *Handler) controlPath(path string) (name, action string, ok bool) {
	if h.ctl == nil {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(path, PathDatasources+"/")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "", "", false
	}
	switch action = rest[i+1:]; action {
	case ActionIsolate, ActionBypass, ActionResume:
		return rest[:i], action, true
	}
	return "", "", false
}

// serveControl runs one control request; see [WithControl].
func (h *Handler) serveControl(w http.ResponseWriter, r *http.Request, name, action string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		h.writeError(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed; %s takes POST", r.Method, action))
		return
	}
	if err := h.ctl.cop.Check(r); err != nil {
		h.writeError(w, r, http.StatusForbidden, "refused: a control request from another site ("+err.Error()+")")
		return
	}
	if err := h.ctl.authorize(r); err != nil {
		h.writeError(w, r, http.StatusForbidden, "not authorized: "+runtime.CleanReason(err.Error()))
		return
	}
	// The reason first: a slow client may take its time to send it, and
	// a family's key looked up before could be dropped meanwhile.
	reason, status, msg := readReason(w, r)
	if msg != "" {
		h.writeError(w, r, status, msg)
		return
	}
	b, release, status, msg := h.controlTarget(name, action)
	if msg != "" {
		h.writeError(w, r, status, msg)
		return
	}
	st := func() runtime.Stats {
		defer release() // before the answer, which a slow client may take its time to read
		switch action {
		case ActionIsolate:
			b.Isolate(reason)
		case ActionBypass:
			b.Bypass(reason)
		default:
			b.Resume(reason)
		}
		return b.Stats()
	}()
	h.writeJSON(w, r, http.StatusOK, st)
}

// controlTarget returns the breaker a control request called name acts
// on, and what to call once it has acted and its Stats are read; or the
// status and message of a refusal. A family's key is held as a call holds
// it ([runtime.Family.Enter]) until release, so that the breaker acted on
// and reported is the key's live one, which the family cannot drop
// meanwhile. A key that is not live is made, for resume too: its breaker
// may start in a mode (the fleet's, read as it is made, or the
// environment's), which only a Resume ends, and a CLOSED key may be
// dropped again, so resume is not bounded. Since
// a key an operator put in a mode is never dropped, isolate and bypass are
// refused (409) for a key not pinned yet (see pinned: one in no mode, or
// in the mode the environment gave it) while its family holds as many
// pinned keys as its bound of live keys: else a client could fill the
// memory with them, making keys or isolating live keys as traffic makes
// more.
func (h *Handler) controlTarget(name, action string) (b *runtime.Breaker, release func(), status int, msg string) {
	reg := h.registry()
	f, key := reg.FamilyOf(name)
	if f == nil {
		b, ok := reg.Lookup(name)
		if !ok {
			msg := fmt.Sprintf("no breaker called %q", name)
			for _, f := range reg.Families() {
				if f.Name() == name {
					// The dashboard groups a family's keys under its name,
					// a name an operator may take for a breaker's.
					msg += fmt.Sprintf("; %q is a family of per-key breakers: control one key at %s/%s/<key>/%s", name, PathDatasources, name, action)
					break
				}
			}
			return nil, nil, http.StatusNotFound, msg
		}
		return b, func() {}, 0, ""
	}
	cur, live := f.Lookup(key)
	if action == ActionResume || live && pinned(cur) {
		k := f.Enter(key)
		return k.Breaker(), k.Done, 0, ""
	}
	// A key going into a mode takes a slot of the bound under the lock, so
	// that two requests cannot both pass it, and acts without it: a slot
	// stays taken until the request ends, when the key it pinned (if it
	// did) is counted instead.
	c := h.ctl
	c.modeMu.Lock()
	if n := keysPinned(f); n+c.pending[f] >= f.Limit() {
		c.modeMu.Unlock()
		return nil, nil, http.StatusConflict, fmt.Sprintf("family %q holds %d keys an operator put in a mode, as many as its bound of live keys with the requests under way, and such keys are never dropped: resume some before you %s %q", f.Name(), n, action, name)
	}
	if c.pending == nil {
		c.pending = map[*runtime.Family]int{}
	}
	c.pending[f]++
	c.modeMu.Unlock()
	giveBack := func() {
		c.modeMu.Lock()
		if c.pending[f]--; c.pending[f] == 0 {
			delete(c.pending, f)
		}
		c.modeMu.Unlock()
	}
	entered := false
	defer func() {
		if !entered { // a hook or Sharer panicked as the key was made
			giveBack()
		}
	}()
	k := f.Enter(key)
	entered = true
	return k.Breaker(), func() { k.Done(); giveBack() }, 0, ""
}

// pinned reports whether b is in a mode an operator (or a peer's) put it
// in, which keeps a family's key live until Resume. A mode the
// environment gave the key as it was made does not: the family drops
// such a key like a CLOSED one ([runtime.Breaker.ModeFromEnv]).
func pinned(b *runtime.Breaker) bool {
	return b.Mode() != runtime.Closed && !b.ModeFromEnv()
}

// keysPinned returns how many of f's live keys are pinned.
func keysPinned(f *runtime.Family) int {
	n := 0
	for _, b := range f.Breakers() {
		if pinned(b) {
			n++
		}
	}
	return n
}

// sendReason says how a control request gives its reason, for the
// messages of the requests that give it otherwise.
const sendReason = "send the reason as the form field reason in the body, as curl --data-urlencode 'reason=…' (application/x-www-form-urlencoded) or curl -F 'reason=…' (multipart/form-data) do"

// readReason returns the reason of a control request, cleaned, or the
// status and message of its refusal. The reason is the one thing a
// control reads, and only from a form in the body: never from the URL,
// which servers log and browsers keep in their history. A query
// parameter, another form field or a body of another type is refused
// rather than ignored, as the GET endpoints refuse a parameter they do
// not read.
func readReason(w http.ResponseWriter, r *http.Request) (reason string, status int, msg string) {
	endpoint := "POST " + r.URL.Path
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", http.StatusBadRequest, "malformed query: " + err.Error()
	}
	if q.Has("reason") {
		return "", http.StatusBadRequest, "a reason in the URL is not read; " + sendReason
	}
	if msg := unknownParam(q, "query parameter", endpoint, nil); msg != "" {
		return "", http.StatusBadRequest, msg + "; " + sendReason
	}

	if r.Body == nil { // a server never passes nil, a handler's caller may
		r.Body = http.NoBody
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxControlBody)
	ct := r.Header.Get("Content-Type")
	mt, ctParams, ctErr := mime.ParseMediaType(ct)
	switch {
	case ctErr == nil && !utf8Charset(ctParams["charset"]):
		// Read as UTF-8 it would go into the event garbled (a latin1
		// "café" as "caf\ufffd"), without a word.
		return "", http.StatusUnsupportedMediaType, fmt.Sprintf("a body in charset %s is not read: send the reason in UTF-8; %s", ctParams["charset"], sendReason)
	case ct == "":
		if n, _ := io.ReadFull(r.Body, make([]byte, 1)); n > 0 {
			return "", http.StatusUnsupportedMediaType, "a body without a Content-Type is not read; " + sendReason
		}
		// No body at all: no reason, refused below as an empty one.
	case ctErr != nil:
		return "", http.StatusBadRequest, fmt.Sprintf("malformed Content-Type %q: %v; %s", ct, ctErr, sendReason)
	case mt == "application/x-www-form-urlencoded":
		err = r.ParseForm()
	case mt == "multipart/form-data":
		err = r.ParseMultipartForm(maxControlBody) // all in memory: the body is no larger
		if r.MultipartForm != nil {
			defer func() { _ = r.MultipartForm.RemoveAll() }()
		}
	default:
		return "", http.StatusUnsupportedMediaType, fmt.Sprintf("a body of type %s is not read; %s", mt, sendReason)
	}
	if err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			return "", http.StatusRequestEntityTooLarge, "malformed form: " + err.Error()
		}
		return "", http.StatusBadRequest, "malformed form: " + err.Error()
	}

	fields := url.Values{} // the names sent, a file's among them
	maps.Copy(fields, r.PostForm)
	if f := r.MultipartForm; f != nil {
		for name := range f.File {
			fields[name] = nil
		}
	}
	if msg := unknownParam(fields, "form field", endpoint, []string{"reason"}); msg != "" {
		return "", http.StatusBadRequest, msg
	}
	if f := r.MultipartForm; f != nil && len(f.File["reason"]) > 0 {
		return "", http.StatusBadRequest, "reason is a file, which is not read (curl -F 'reason=@name' uploads one); give it as text: curl -F 'reason=…'"
	}
	if len(r.PostForm["reason"]) > 1 {
		return "", http.StatusBadRequest, "reason given more than once; give it once"
	}
	reason = runtime.CleanReason(r.PostForm.Get("reason"))
	if strings.Trim(reason, "\uFFFD \t") == "" {
		// Empty, or only control characters and bytes that are not UTF-8,
		// which CleanReason replaced: nothing a reader could act on.
		return "", http.StatusBadRequest, "a reason is required: give the form field reason saying why, in words (it goes in the event), as curl --data-urlencode 'reason=…' or curl -F 'reason=…' do"
	}
	return reason, 0, ""
}

// utf8Charset reports whether a Content-Type's charset is read as UTF-8:
// none, UTF-8 (or its common misspelling utf8), or US-ASCII, a subset.
func utf8Charset(cs string) bool {
	switch strings.ToLower(cs) {
	case "", "utf-8", "utf8", "us-ascii":
		return true
	}
	return false
}
