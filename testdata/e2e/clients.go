package e2e

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Cmd is a command that carries its error, as go-redis's do.
type Cmd struct {
	val string
	err error
}

// NewCmd returns a command answering val, or failing with err.
func NewCmd(val string, err error) *Cmd { return &Cmd{val: val, err: err} }

func (c *Cmd) Val() string      { return c.val }
func (c *Cmd) Err() error       { return c.err }
func (c *Cmd) SetErr(err error) { c.err = err }

// Request carries its ctx, as *http.Request does.
type Request struct {
	ctx  context.Context
	Path string
}

// NewRequest returns a request on ctx.
func NewRequest(ctx context.Context, path string) *Request { return &Request{ctx: ctx, Path: path} }

func (r *Request) Context() context.Context { return r.ctx }

// WithContext returns a copy of r on ctx.
func (r *Request) WithContext(ctx context.Context) *Request {
	c := *r
	c.ctx = ctx
	return &c
}

// Response is an answer with a status.
type Response struct{ Code int }

// errUnavailable asks for a cooldown.
type errUnavailable struct{ after time.Duration }

func (e errUnavailable) Error() string             { return "unavailable" }
func (e errUnavailable) RetryAfter() time.Duration { return e.after }

// failed is the failure func of Client: a 5xx is a failure, a 503 asks
// for a minute's cooldown.
func failed(resp *Response) error {
	switch {
	case resp == nil || resp.Code < 500:
		return nil
	case resp.Code == 503:
		return errUnavailable{after: time.Minute}
	}
	return errors.New("server error")
}

// Client is the shapes of SPEC §12.
//
//breaker:name=client threshold=2 reset=10s
type Client interface {
	Get(ctx context.Context, key string) *Cmd
	QueryRow(ctx context.Context, query string) *sql.Row
	//breaker:name=roundtrip failure=failed timeout=1s
	Do(req *Request) (*Response, error)
	//breaker:name=tried attempts=2 backoff=1ms
	Fetch(ctx context.Context, key string) *Cmd
	//breaker:name=tried attempts=2 backoff=1ms failure=failed
	Ask(req *Request) (*Response, error)
}

// Pages keeps its answers for an hour; its ctx is the request's.
//
//breaker:name=pages threshold=5 stale=1h
type Pages interface {
	Page(req *Request) (string, error)
}

// UserCtx is a context.Context that carries a user, as a web framework's
// own context does (a *gin.Context implements context.Context too).
type UserCtx interface {
	context.Context
	User() string
}

// Handler takes its ctx as a context.Context of its own type: the
// caller's cancel and deadline reach the breaker and the limiter.
//
//breaker:name=handler threshold=1 reset=1h
type Handler interface {
	Serve(ctx UserCtx, path string) (string, error)
	//breaker:name=handlerlimited ratelimit=1/1
	Limited(ctx UserCtx) error
	//breaker:name=handlerstale stale=1h
	Cached(ctx UserCtx, path string) (string, error)
}
