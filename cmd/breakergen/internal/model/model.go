// Package model decides what to emit: which interfaces are annotated, the
// method set of each (from go/types, embedded interfaces included), which
// route guards each method, and the resolved settings of every breaker name
// of the run.
package model

import (
	"go/token"
	"go/types"
	"time"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
)

// Run is everything a run emits.
type Run struct {
	// Files are the outputs, sorted by path.
	Files []*File
	// Sources are the absolute paths of the files that were loaded and
	// scanned (outputs of other files are never removed on their behalf).
	Sources map[string]bool
	// Errors and Warnings are sorted.
	Errors, Warnings []*annotation.Error
}

// File is one output file.
type File struct {
	Path    string // absolute path of the output
	Source  string // absolute path of the file declaring the interfaces
	Build   string // the source's //go:build line, or ""
	PkgName string
	PkgPath string
	// Reserved are the package-scope names of the destination package,
	// the generated ones included, and the type parameters of the file's
	// generic interfaces: names no import of the file may take.
	Reserved map[string]bool
	// Interfaces in name order.
	Interfaces []*Interface
}

// Interface is one annotated interface.
type Interface struct {
	Name    string // X
	Wrapper string // XBreaker
	Ctor    string // NewXBreaker
	// NextField is the wrapper's field holding the wrapped X: next, unless
	// a method is called next.
	NextField string
	Obj       *types.TypeName
	// TypeParams of a generic interface, or nil.
	TypeParams *types.TypeParamList
	// Methods in name order.
	Methods []*Method
	// Routes used by at least one method, in field order.
	Routes []*Route
	// Chain reports whether a line of the interface carries the chain flag:
	// only then is the fallback chain written.
	Chain bool
	// ChainType and ChainCtor name the fallback chain: XChain, NewXChain.
	ChainType, ChainCtor string
	// PrimaryField and FallbacksField are the chain's fields holding the
	// primary X and the fallbacks.
	PrimaryField, FallbacksField string
	// Families are the wrapper's families of per-key breakers, one per
	// keyed breaker name its routes use, in field order.
	Families []*Family
	// Default is the interface's line without methods, or nil: its
	// name-level settings guard the fallbacks.
	Default *Route
	Pos     token.Position
}

// Method is one method of the method set.
type Method struct {
	Name string
	Sig  *types.Signature
	// Route guards the method; nil when it is delegated unguarded, and then
	// Why says why.
	Route *Route
	Why   string
	// ErrLike, for a method unguarded for want of an error result
	// (Why "noerror"), is its last result's type when that is an error of
	// its own (an interface embedding error, a *StatusErr): no refusal of
	// the runtime's can be returned as one. "" otherwise.
	ErrLike string
	// Ctx reports whether the first parameter is a context.Context.
	Ctx bool
	// CtxFrom, for a method without a context.Context first parameter, is
	// 1 + the index of the first parameter whose type has a method
	// Context() context.Context (an *http.Request): that ctx drives the
	// breaker, limiter, timeout and budget. 0 for none. CtxWith reports
	// whether its type also has WithContext(context.Context) returning
	// the same type, so that a timeout's ctx can go on with it. CtxSelf
	// reports that the parameter (then the first) is itself a
	// context.Context of another type, one that implements it (an
	// interface embedding it, a *gin.Context): the ctx is the parameter
	// converted to context.Context, not its Context(), and no deadline can
	// be put into it, as with a type without WithContext.
	CtxFrom int
	CtxWith bool
	CtxSelf bool
	// Carrier describes the last result when the method has no error
	// result and that result carries its error (Err() error, as go-redis
	// commands and *sql.Row do); nil otherwise.
	Carrier *Carrier
	// Response is 1 + the index of a *net/http.Response result, 0 for
	// none: with a timeout, the response's body holds the timeout's
	// cancel until it is closed.
	Response int
	// Handles are the results that hold a connection of database/sql's
	// pool until their method (Close, or a *sql.Tx's Rollback) is called:
	// *sql.Rows, *sql.Conn, *sql.Stmt, *sql.Tx. A chain releases those of
	// a source it passes over, a retry those of the try it replaces, and a
	// race its losers'.
	Handles []Handle
	// Conns are the indexes of the results that hold a connection of
	// go-redis until closed: a *redis.PubSub (subscribed until Close) or
	// a *redis.Conn. They are released as Handles are. Other results with
	// a Close method are not: nothing says they are not shared, and they
	// are the caller's to handle.
	Conns []int
	// Streams are the indexes of the results that are streams read after
	// the call, each a pointer or an interface with Read([]byte) (int,
	// error) and Close() error (an io.ReadCloser, an *os.File, a
	// net.Conn), other than Handles: a stream belongs to whoever the call
	// returns it to, so a retry closes that of the try it replaces, a
	// chain that of a source it passes over, and a race its losers'.
	Streams []int
	// FieldStreams are the results that hold a stream in an exported
	// field of their own (an object store's output and its Body): that
	// stream is released as a top-level one is.
	FieldStreams []FieldStream
	// Request is 1 + the index of the first *net/http.Request parameter,
	// 0 for none: a retry or a chain's next source sends it again with
	// its body rewound (httpguard.Rewind).
	Request int
	// Readers are the indexes of the parameters that are bodies a try
	// reads (see isBody): an interface with Read and otherwise only a
	// read-only body's methods (an io.Reader, an io.ReadSeekCloser), or
	// a pointer to a strings.Reader, bytes.Reader, bufio.Reader,
	// io.SectionReader, io.LimitedReader, io.PipeReader or os.File; not
	// one with Write (a *bytes.Buffer, a net.Conn), nor one named rand or
	// random (an entropy source). Only a parameter that is itself a
	// body: not a variadic ...io.Reader, nor a reader in a struct. A
	// retry or a chain's next source seeks each back to where it was
	// before the first try (breakerimpl.Mark), and sends nothing again
	// when one cannot be (no io.Seeker, or its Seek fails). Such a method
	// is never hedged: two sources cannot read one reader at once.
	Readers []int
	// UseTimeout reports whether the body adds the route's timeout to ctx.
	UseTimeout bool
	// Try names the unexported method making one try of a guarded method:
	// always in the chain, and in the wrapper when its route needs it
	// ([Route.Helper]).
	Try string
	// StaleField names the field holding the method's stale cache, when its
	// route has one.
	StaleField string
	// Key says which argument picks the method's breaker when its route is
	// keyed; nil otherwise.
	Key *Key
	// Hedged reports whether the chain races the method's sources: its
	// route has hedge, the interface a chain, and the method a ctx to
	// cancel a losing source with.
	Hedged bool
	// Answers are the errors of a client's own that its plain error
	// result may hold and that are answers of a healthy server, not
	// failures (go-redis's redis.Nil: a missing key), when the method
	// is the client's: a parameter or result type of its signature is of
	// the client's package (or, for database/sql's ErrTxDone, it is a
	// transaction's Commit or Rollback: see answerRoutes). Its route
	// excludes them, as if the line's exclude named them.
	Answers []Answer
	// Commands, for a guarded method that returns go-redis's commands
	// beside its error ([]redis.Cmder: Pipelined, TxPipelined, a
	// Pipeliner's Exec), says which result they are and what miss their
	// Err() may hold: the outcome is then the first command's error that
	// is not the miss (breakerimpl.FirstFailed), not go-redis's error,
	// which is the first command's, a miss ahead of a failure too. nil
	// otherwise.
	Commands *Commands
}

// Commands is a result of go-redis's commands (see Method.Commands).
type Commands struct {
	Index int // of the result
	Miss  Ref // an Err() that is an answer: redis.Nil
}

// Answer is an error a client returns for an answer (see Method.Answers).
type Answer struct {
	Ref
	What string // what it answers: "a missing key"
}

// Carrier is a result that carries the call's error: the wrapper reads
// its Err() for the outcome, and returns a refusal in a fresh value of it.
type Carrier struct {
	Type types.Type // the result's type, a pointer
	// Refuse says how a refusal is returned: CarrySetErr (a new value of
	// the pointed-to type, then SetErr) or CarrySQLRow (sqlimpl.Row).
	Refuse Carry
	// Miss is an Err() value that is no failure (go-redis's redis.Nil,
	// a missing key), or nil.
	Miss *Ref
}

// Carry is how a refusal reaches the caller through a [Carrier].
type Carry int

const (
	// CarrySetErr: new(T), then SetErr(err).
	CarrySetErr Carry = iota + 1
	// CarrySQLRow: a *sql.Row whose Err() is err (sqlimpl.Row).
	CarrySQLRow
)

// CtxFirst reports whether the first parameter is the call's ctx: a
// context.Context, or a context of another type (CtxSelf). It is no
// argument of the call's own, and the stale cache's key leaves it out.
func (m *Method) CtxFirst() bool { return m.Ctx || m.CtxSelf }

// Judged reports whether the method's outcome is not simply its error
// result: its result carries the error, or a failure func judges answers.
// Such a method keeps its outcome in a local of its own.
func (m *Method) Judged() bool {
	return m.Carrier != nil || m.Route != nil && (m.Route.Failure != nil || m.Commands != nil)
}

// Settings are the name-level settings of a breaker name; zero fields are
// not given (the runtime's defaults apply).
type Settings struct {
	Threshold int
	Reset     time.Duration
	// ResetMax is the cap of an OPEN period that doubles after each
	// failed probe (reset=D..MAX), 0 without one; Jitter (0..1) spreads
	// each OPEN period (SPEC §14).
	ResetMax  time.Duration
	Jitter    float64
	HalfOpen  int
	Successes int
	Rate      annotation.Rate
	// The window (SPEC section 8): WindowCalls or WindowPeriod, never both.
	WindowCalls  int
	WindowPeriod time.Duration
	FailureRate  float64 // 0..1
	MinimumCalls int
	SlowCall     time.Duration
	SlowRate     float64 // 0..1
	InFlight     time.Duration
	// Load control (SPEC section 9).
	Concurrency int
	Throttle    float64
	// A keyed name's family (SPEC section 15): Keys live keys at most (0:
	// the runtime's default), MaxOpen percent of them out of CLOSED (0: no
	// cap).
	Keys    int
	MaxOpen int
}

// Route is one annotation line as the wrapper uses it.
type Route struct {
	Field    string // the wrapper's field holding the *breakerimpl.Route (or a keyed route's *breakerimpl.Family)
	Name     string // breaker (and limiter) name
	Settings Settings
	pkg      string // path of the package whose annotation made it
	Timeout  time.Duration
	MaxWait  time.Duration
	Exclude  []Ref
	// Attempts, Backoff and Budget are the line's retry keys; zero when
	// not given.
	Attempts int
	Backoff  annotation.Backoff
	Budget   int
	// Valid is the func judging a result (the valid key), or nil.
	// ValidNamed says that it returns a named type whose underlying type
	// is bool (type Ok bool): its call is converted to bool.
	Valid      *Ref
	ValidNamed bool
	// Failure is the func telling a failure answer (the failure key), or
	// nil.
	Failure *Ref
	// Stale is how long a valid result is kept (the stale key); 0 for no
	// cache. StaleSize is the most entries kept per method; 0 for the
	// runtime's default.
	Stale     time.Duration
	StaleSize int
	// Hedge is how long a chain waits for the source it asked before it
	// also asks the next (the hedge key); 0 for none. Hedges is the most
	// extra sources in flight; 0 for the runtime's default, one.
	Hedge  time.Duration
	Hedges int
	Pos    token.Position // of the line
	Method string         // for a method's own line, the method
	// KeyParam is the line's key: the parameter whose value picks the
	// breaker "<Name>/<value>" ("" for an unkeyed route); Family is the
	// wrapper's family it goes through.
	KeyParam string
	Family   *Family
	// FallbackField is the chain's field holding the route's fallback
	// routes, one per fallback (only with the chain flag).
	FallbackField string

	// The options behind the settings, for errors found later.
	validFunc  *types.Func        // resolved Valid
	validOpt   *annotation.Option // the option giving valid
	failFunc   *types.Func        // resolved Failure
	failOpt    *annotation.Option // the option giving failure
	staleOpt   *annotation.Option // the option giving stale
	maxwaitOpt *annotation.Option // the option giving maxwait
	backoffOpt *annotation.Option // the option giving backoff
	keyOpt     *annotation.Option // the option giving key
	keyOnIface bool               // whether keyOpt is on an interface line
	order      int                // of the wrapper's fields
}

// Retries reports whether calls of the route go through a retry loop: it
// makes more than one try or has a budget of its own.
func (r *Route) Retries() bool { return r.Attempts > 1 || r.Budget > 0 }

// Helper reports whether a method of the route makes its tries in a helper:
// it retries, judges results or keeps them.
func (r *Route) Helper() bool { return r.Retries() || r.Valid != nil || r.Stale > 0 }

// Ref is a package-level value: an error to exclude.
type Ref struct {
	Path string // import path; the destination's own for a local name
	Name string
	Text string // as written in the annotation
}

// Handle is a result of a method that holds a connection until Release,
// its method, is called (see Method.Handles).
type Handle struct {
	Index   int    // among the results
	Type    string // Rows, Conn, Stmt or Tx: the result is a *database/sql.Type
	Release string // Close or Rollback
}

// FieldStream is a result's exported field that is a stream (see
// Method.FieldStreams).
type FieldStream struct {
	Index int    // among the results
	Field string // the field's name
	Ptr   bool   // the result is a pointer to the struct
}

// Requests returns the indexes of m's *net/http.Request parameters, in
// order (Request is 1 + the first): a retry or a chain's next source
// rewinds each, and a refused client's call closes each one's body.
func (m *Method) Requests() []int {
	var is []int
	for i := range m.Sig.Params().Len() {
		if isNamedPtr(m.Sig.Params().At(i).Type(), "net/http", "Request") {
			is = append(is, i)
		}
	}
	return is
}

// Handle returns m's result of type *database/sql.typ (see Handles), and
// whether it has one.
func (m *Method) Handle(typ string) (Handle, bool) {
	for _, h := range m.Handles {
		if h.Type == typ {
			return h, true
		}
	}
	return Handle{}, false
}

// NoErrorWhy says why a method unguarded for want of an error result (Why
// "noerror") cannot be guarded, in words that fit after "it".
func (m *Method) NoErrorWhy() string {
	if m.ErrLike != "" {
		return "returns " + m.ErrLike + " last, not error, which no refusal of the breaker's can be returned as"
	}
	return "has no error result to report failures with"
}
