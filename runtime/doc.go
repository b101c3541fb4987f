// Package runtime is what breakergen's generated wrappers call: named
// circuit breakers, token-bucket limiters, a registry that owns them, an
// in-memory degradation-event log and health levels.
//
// It depends on the standard library only. HTTP handlers live in the
// subpackage runtime/httphealth.
//
// # Breakers
//
// A [Breaker] is CLOSED, OPEN or HALF_OPEN ([State]). CLOSED admits every
// call and counts consecutive failures; reaching the threshold moves it to
// OPEN, which rejects every call with an error matching [ErrOpen] without
// calling the upstream. Once the reset window has passed it is HALF_OPEN and
// admits a few probes: enough successes close it, one failure re-opens it.
// A probe whose outcome never comes back is reclaimed as a failure after the
// window, so a breaker can never stay HALF_OPEN for ever.
//
// # Registry
//
// A [Registry] owns breakers and limiters by name; wrappers that name the
// same breaker share it. [Default] is the process-wide registry.
// [Registry.Health] reports a level per breaker and [Registry.Events] the
// degradation log, newest first.
package runtime
