package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// copyDir copies the regular files of src into dst.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
}

// goCmd runs the go command (or another tool) in dir and fails the test
// with its output if it fails.
func goCmd(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, goEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v:\n%s", name, args, out)
	return string(out)
}

// TestEndToEnd generates wrappers into a temporary module (testdata/e2e),
// mocks the interfaces with mockgen (the version pinned by our go.mod's
// tool directive), and runs go vet and the module's behaviour tests, which
// drive the generated wrappers through the mocks: trip, rejection without
// a call, probe and recovery, route independence, a breaker shared by name
// across interfaces, variadic forwarding, panics, timeouts, rate limits,
// and retries: tries, backoff, budgets, non-retryable errors, cooldowns
// and environment overrides; and fallback chains: every path (live,
// fallback after an error or an open breaker, stale, too old, invalid
// answers, budgets) with its provenance, and valid and stale in a wrapper;
// the window and load keys reaching the breaker's Config, under the
// environment's and WithConfig's overrides; and hedged chains: the backup
// at the hedge delay, the second hedge at twice it, every result of the
// winner, and the losers not failing; and SPEC §12 (clients.go): results
// that carry their error, the ctx of a request, a ctx of its own type
// and its stale cache, failure answers, a Do(ctx, req)'s timeout reaching
// a request made on ctx against a hanging httptest server; and
// SPEC §15 (keys.go): breakers per key of a string, integers, a
// fmt.Stringer and an *http.Request's host against two httptest servers
// (the 503 one trips alone), the family's bound and maxopen, and a chain
// whose primary is keyed.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds mockgen and runs go test in a temporary module")
	}
	dir := t.TempDir()
	writeModule(t, dir)
	copyDir(t, fixtures+"/e2e", dir)
	// The go.mod needs the mocks' and the tests' dependencies.
	goCmd(t, dir, "go", "mod", "edit",
		"-require=go.uber.org/mock@"+modVersion(t, "go.uber.org/mock"),
		"-require=github.com/stretchr/testify@"+modVersion(t, "github.com/stretchr/testify"))

	var stdout, stderr bytes.Buffer
	o := &options{patterns: []string{"./..."}, dir: dir, env: goEnv()}
	stderr.Reset()
	require.NoError(t, generate(o, &stdout, &stderr), stderr.String())
	// Name() string is left without skip on purpose (the wrapper's
	// unguarded path is tested): a warning is about it. Pages.Page and
	// Cache.Ask keep answers keyed by a request pointer, which their
	// tests pass again (a service would make a new one per call): a
	// warning each. Each method of readers.go but Signer's takes an
	// io.Reader body, which a later try sends again only when it is an
	// io.Seeker: a warning each (Replicas's at the interface, which says
	// the bodies of all its methods without retries), RacedStore's saying
	// too that its hedge has no effect. Signer's arguments with Read are
	// no bodies.
	require.Regexp(t, `^clients\.go:\d+:\d+: warning: stale: Pages\.Page: argument req of type \*Request keys the cache by its address[^\n]*\n`+
		`judged\.go:\d+:\d+: warning: stale: Cache\.Ask: argument req of type \*Request keys the cache by its address[^\n]*\n`+
		`readers\.go:\d+:\d+: warning: Store\.Put: body, of type io\.Reader, is sent again by a later try only when it can be sought back[^\n]*\n`+
		`readers\.go:\d+:\d+: warning: Poster\.Post: body, of type io\.Reader, is sent again[^\n]*\n`+
		`readers\.go:\d+:\d+: warning: Replicas: the chain sends a fallback a body the primary read only when it can be sought back[^\n]*: Put's body \(io\.Reader\);[^\n]*\n`+
		`readers\.go:\d+:\d+: warning: RacedStore\.Put: hedge=10ms of breaker "racedstore" has no effect: its argument body is a reader, which two sources cannot read at once[^\n]*; and body, of type io\.Reader, is sent again[^\n]*\n`+
		`source\.go:\d+:\d+: warning: Source: 1 of its \d+ methods is delegated unguarded \(Name: no error result\)[^\n]*\n$`, stderr.String())
	require.FileExists(t, filepath.Join(dir, "source_breaker.go"))

	mockgen := filepath.Join(t.TempDir(), "mockgen")
	goCmd(t, repoRoot(), "go", "build", "-o", mockgen, "go.uber.org/mock/mockgen")
	goCmd(t, dir, mockgen, "-source=source.go", "-destination=mock_test.go", "-package=e2e")

	goCmd(t, dir, "go", "vet", "./...")
	out := goCmd(t, dir, "go", "test", "-count=1", "-race", "-v", "./...")
	t.Log(out)

	// A second run writes nothing.
	before := snapshot(t, dir)
	require.NoError(t, generate(o, &stdout, &stderr))
	require.Equal(t, before, snapshot(t, dir))
}

// modVersion is the version of module path in our build list.
func modVersion(t testing.TB, path string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", path).Output()
	require.NoError(t, err)
	return string(bytes.TrimSpace(out))
}
