package breakerimpl

import "github.com/breakergen/breakergen/runtime/internal/core"

// FirstFailed returns the outcome of a call that returned a client's
// commands cmds beside err (go-redis's Pipelined, TxPipelined, a
// Pipeliner's Exec, whose err is the first command's error, a miss
// too): nil when err is; else the first command's Err() that is neither
// nil nor miss (redis.Nil: a missing key is an answer, and one ahead of
// a failed command must not hide that failure); else err itself (a miss,
// or an error of the call's own: the fn that built the pipeline failed).
// The caller still gets err: only the breaker counts the outcome.
func FirstFailed[C interface{ Err() error }](cmds []C, err, miss error) error {
	if err == nil {
		return nil
	}
	for _, c := range cmds {
		if any(c) == nil {
			continue
		}
		if e := c.Err(); e != nil && e != miss && !core.ErrorIs(e, miss) {
			return e
		}
	}
	return err
}
