package runtime

// SetEnviron replaces the environment NewRegistry reads, for tests.
func SetEnviron(env []string) (restore func()) {
	old := environ
	environ = func() []string { return env }
	return func() { environ = old }
}
