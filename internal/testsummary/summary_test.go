package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stream is go test -json output (go1.26) of a package with a passing, a
// failing and two skipping tests, one of them a subtest, and a passing
// package.
const stream = `{"Action":"start","Package":"example.com/m/a"}
{"Action":"run","Package":"example.com/m/a","Test":"TestOK"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOK","Output":"    a_test.go:9: chatter of a passing test\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"example.com/m/a","Test":"TestOK"}
{"Action":"run","Package":"example.com/m/a","Test":"TestBad"}
{"Action":"output","Package":"example.com/m/a","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestBad","Output":"    a_test.go:12: got 1, want 2\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"example.com/m/a","Test":"TestBad"}
{"Action":"run","Package":"example.com/m/a","Test":"TestBrowser"}
{"Action":"output","Package":"example.com/m/a","Test":"TestBrowser","Output":"=== RUN   TestBrowser\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestBrowser","Output":"    a_test.go:20: looking for it\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestBrowser","Output":"    a_test.go:21: missing component: chromium (apt-get install chromium)\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestBrowser","Output":"--- SKIP: TestBrowser (0.00s)\n"}
{"Action":"skip","Package":"example.com/m/a","Test":"TestBrowser"}
{"Action":"run","Package":"example.com/m/a","Test":"TestAllocs"}
{"Action":"run","Package":"example.com/m/a","Test":"TestAllocs/one"}
{"Action":"output","Package":"example.com/m/a","Test":"TestAllocs/one","Output":"    a_test.go:30: allocation counts are not meaningful\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestAllocs/one","Output":"        under -race\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestAllocs/one","Output":"    --- SKIP: TestAllocs/one (0.00s)\n"}
{"Action":"skip","Package":"example.com/m/a","Test":"TestAllocs/one"}
{"Action":"output","Package":"example.com/m/a","Test":"TestAllocs","Output":"--- PASS: TestAllocs (0.00s)\n"}
{"Action":"pass","Package":"example.com/m/a","Test":"TestAllocs"}
{"Action":"output","Package":"example.com/m/a","Output":"FAIL\n"}
{"Action":"output","Package":"example.com/m/a","Output":"FAIL\texample.com/m/a\t0.01s\n"}
{"Action":"fail","Package":"example.com/m/a"}
{"Action":"start","Package":"example.com/m/b"}
{"Action":"output","Package":"example.com/m/b","Test":"TestFine","Output":"=== RUN   TestFine\n"}
{"Action":"output","Package":"example.com/m/b","Test":"TestFine","Output":"--- PASS: TestFine (0.00s)\n"}
{"Action":"pass","Package":"example.com/m/b","Test":"TestFine"}
{"Action":"output","Package":"example.com/m/b","Output":"PASS\n"}
{"Action":"output","Package":"example.com/m/b","Output":"ok  \texample.com/m/b\t0.01s\n"}
{"Action":"pass","Package":"example.com/m/b"}
`

func TestSummarizePrintsWhatGoTestPrints(t *testing.T) {
	var out bytes.Buffer
	skips, err := summarize(strings.NewReader(stream), &out)
	require.NoError(t, err)
	assert.Equal(t, "    a_test.go:12: got 1, want 2\n--- FAIL: TestBad (0.00s)\nFAIL\nFAIL\texample.com/m/a\t0.01s\n"+
		"ok  \texample.com/m/b\t0.01s\n", out.String(), "the failure's output and a line per package, as without -v")
	assert.Equal(t, []Skip{
		{Package: "example.com/m/a", Test: "TestBrowser", Reason: "missing component: chromium (apt-get install chromium)"},
		{Package: "example.com/m/a", Test: "TestAllocs/one", Reason: "allocation counts are not meaningful | under -race"},
	}, skips, "the last message before the skip, without file:line")
}

func TestSummarizeShowsAnUnfinishedPackage(t *testing.T) {
	var out bytes.Buffer
	in := `{"Action":"output","Package":"p","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"panic: test timed out after 1s\n"}
not json
`
	_, err := summarize(strings.NewReader(in), &out)
	require.NoError(t, err)
	assert.Equal(t, "not json\npanic: test timed out after 1s\n", out.String())
}

func TestReportGroupsReasons(t *testing.T) {
	skips := []Skip{
		{"github.com/breakergen/breakergen/runtime", "TestA", "allocation counts are not meaningful under -race"},
		{"github.com/breakergen/breakergen/runtime", "TestB", "allocation counts are not meaningful under -race"},
		{"github.com/breakergen/breakergen/bench/contend", "TestC", "allocation counts are not meaningful under -race"},
		{"example.com/x", "TestP", "missing component: promtool (apt-get install prometheus)"},
	}
	var out bytes.Buffer
	require.NoError(t, writeReport(&out, skips, false))
	assert.Equal(t, `skipped: 4 tests, for 2 reasons (go test -v shows each):
    3  allocation counts are not meaningful under -race
       bench/contend: TestC
       runtime: TestA, TestB
    1  missing component: promtool (apt-get install prometheus)
       example.com/x: TestP
`, out.String())

	out.Reset()
	err := writeReport(&out, skips, true)
	require.ErrorIs(t, err, errFailed, "CI installs every component: such a skip fails")
	assert.Contains(t, out.String(), "FAIL: CI=true and 1 test skipped for a missing component")

	out.Reset()
	require.NoError(t, writeReport(&out, skips[:3], true), "other skips pass in CI")
	out.Reset()
	require.NoError(t, writeReport(&out, nil, true))
	assert.Equal(t, "skipped: no tests\n", out.String())
}

// TestRunKeepsTheExitStatus runs go test through run in a module of its
// own: a failing test fails run, and -record/-report carry the skip.
func TestRunKeepsTheExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in a temporary module")
	}
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, src string) { require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644)) }
	write("go.mod", "module example.com/m\n\ngo 1.25\n")
	write("m_test.go", `package m

import (
	"os"
	"testing"
)

func TestMaybe(t *testing.T) {
	if os.Getenv("SUMMARY_FAIL") != "" {
		t.Fatal("asked to fail")
	}
}

func TestGone(t *testing.T) { t.Skip("missing component: nothing (apt-get install nothing)") }

func TestAllocsNone(t *testing.T) {
	if n := testing.AllocsPerRun(10, func() {}); n != 0 {
		t.Fatal(n)
	}
}
`)
	rec := filepath.Join(t.TempDir(), "skips")
	t.Chdir(dir)
	t.Setenv("GOFLAGS", "-count=1")

	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"-record", rec, goCmd, "test", "./..."}, &out, &errOut, false), errOut.String())
	assert.True(t, strings.HasPrefix(out.String(), "ok  \texample.com/m\t"), out.String())

	out.Reset()
	require.NoError(t, run([]string{"-allocs", goCmd, "test", "-v", "./..."}, &out, &errOut, false), errOut.String())
	assert.Contains(t, out.String(), "ok  \texample.com/m")

	t.Setenv("SUMMARY_FAIL", "1")
	out.Reset()
	require.ErrorIs(t, run([]string{"-record", rec, goCmd, "test", "./..."}, &out, &errOut, false), errFailed)
	assert.Contains(t, out.String(), "m_test.go:10: asked to fail")
	assert.Contains(t, out.String(), "--- FAIL: TestMaybe")

	out.Reset()
	require.ErrorIs(t, run([]string{"-report", rec}, &out, &errOut, true), errFailed)
	assert.Contains(t, out.String(), "skipped: 1 test, for 1 reason")
	assert.Contains(t, out.String(), "example.com/m: TestGone", "recorded by both runs, counted once")
}

// TestAllocationTestsAreNamedAlloc: the allocation pass finds every
// AllocsPerRun call of the repository (each module's tests).
func TestAllocationTestsAreNamedAlloc(t *testing.T) {
	require.NoError(t, checkAllocNames("../.."))

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x_test.go"), []byte(`package x

import "testing"

func TestQuiet(t *testing.T) { _ = testing.AllocsPerRun(1, func() {}) }

func TestQuietAllocs(t *testing.T) { _ = testing.AllocsPerRun(1, func() {}) }

func helper() float64 { return testing.AllocsPerRun(1, func() {}) }
`), 0o644))
	err := checkAllocNames(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x_test.go:5: testing.AllocsPerRun in TestQuiet")
	assert.Contains(t, err.Error(), "x_test.go:9: testing.AllocsPerRun in helper")
	assert.NotContains(t, err.Error(), "TestQuietAllocs")
}
