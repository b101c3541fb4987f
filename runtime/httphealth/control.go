package httphealth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

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
// of its own); the breaker must exist (404); the reason must not be empty
// once cleaned as every reason is (one line, control characters replaced,
// at most 200 characters; 400). The answer is the breaker's
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
	b, ok := h.registry().Lookup(name)
	if !ok {
		msg := fmt.Sprintf("no breaker called %q", name)
		for _, f := range h.registry().Families() {
			if f.Name() == name {
				// The dashboard groups a family's keys under its name, a
				// name an operator may take for a breaker's.
				msg += fmt.Sprintf("; %q is a family of per-key breakers: control one key at %s/%s/<key>/%s", name, PathDatasources, name, action)
				break
			}
		}
		h.writeError(w, r, http.StatusNotFound, msg)
		return
	}
	if r.Body == nil { // a server never passes nil, a handler's caller may
		r.Body = http.NoBody
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxControlBody)
	if err := r.ParseForm(); err != nil {
		status := http.StatusBadRequest
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			status = http.StatusRequestEntityTooLarge
		}
		h.writeError(w, r, status, "malformed form: "+err.Error())
		return
	}
	if len(r.PostForm["reason"]) > 1 {
		h.writeError(w, r, http.StatusBadRequest, "reason given more than once; give it once")
		return
	}
	reason := runtime.CleanReason(r.PostForm.Get("reason"))
	if strings.Trim(reason, "\uFFFD \t") == "" {
		// Empty, or only control characters and bytes that are not UTF-8,
		// which CleanReason replaced: nothing a reader could act on.
		h.writeError(w, r, http.StatusBadRequest, "a reason is required: give a form field reason saying why, in words (it goes in the event)")
		return
	}
	switch action {
	case ActionIsolate:
		b.Isolate(reason)
	case ActionBypass:
		b.Bypass(reason)
	default:
		b.Resume(reason)
	}
	h.writeJSON(w, r, http.StatusOK, b.Stats())
}
