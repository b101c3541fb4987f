package runtime

// SetEnviron replaces the environment NewRegistry reads, for tests.
func SetEnviron(env []string) (restore func()) {
	old := environ
	environ = func() []string { return env }
	return func() { environ = old }
}

// ForgetCallStates clears the flag set by the first WithBudget or
// WithProvenance of the process, for tests that need a process that has used
// neither; restore sets it back. Tests using it must not run in parallel.
func ForgetCallStates() (restore func()) {
	old := callStatesInUse.Load()
	callStatesInUse.Store(0)
	return func() { callStatesInUse.Store(old) }
}
