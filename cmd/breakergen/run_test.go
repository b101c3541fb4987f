package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
)

func TestExitCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.NoError(t, run([]string{"-h"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "usage: breakergen")
	assert.Empty(t, out.String())

	errOut.Reset()
	err := run([]string{"-nope"}, &out, &errOut)
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, errOut.String(), "flag provided but not defined")

	assert.Equal(t, 1, exitCode(errReported))
}

func TestParseArgs(t *testing.T) {
	var errOut bytes.Buffer
	o, err := parseArgs([]string{"-type", "A, B,,", "-tags", "a,b", "-check", "./x", "./y/..."}, &errOut)
	assert.NoError(t, err)
	assert.Equal(t, []string{"A", "B"}, o.types)
	assert.Equal(t, "a,b", o.tags)
	assert.True(t, o.check)
	assert.Equal(t, []string{"./x", "./y/..."}, o.patterns)

	o, err = parseArgs(nil, &errOut)
	assert.NoError(t, err)
	assert.Equal(t, []string{"."}, o.patterns)

	// A -type naming nothing is a usage error, not every interface.
	for _, arg := range []string{"-type=", "-type= , "} {
		errOut.Reset()
		_, err = parseArgs([]string{arg}, &errOut)
		assert.ErrorIs(t, err, errUsage, arg)
		assert.Contains(t, errOut.String(), "names no interface; omit -type to generate every annotated interface", arg)
	}
}

// TestBrokenOwnOutputs: our earlier outputs that no longer parse or
// type-check do not stop a run (they are never type-checked): the live one
// is rewritten and the orphan is removed.
func TestBrokenOwnOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	dir := t.TempDir()
	writeModule(t, dir)
	files := map[string]string{
		"a.go": "package x\n\nimport \"context\"\n\n//breaker:name=s\ntype Source interface {\n\tGet(ctx context.Context) error\n}\n",
		// A syntax error, as an interrupted write might leave.
		"a_breaker.go": load.Header + "\n\npackage x\n\nfunc (w *SourceBreaker) Get(\n",
		// A type error, and no source any more.
		"gone_breaker.go": load.Header + "\n\npackage x\n\nvar _ Gone = (*GoneBreaker)(nil)\n",
	}
	for name, src := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	var stdout, stderr strings.Builder
	require.NoError(t, generate(&options{patterns: []string{"."}, dir: dir, env: goEnv()}, &stdout, &stderr), stderr.String())
	assert.Empty(t, stderr.String())
	got, err := os.ReadFile(filepath.Join(dir, "a_breaker.go"))
	require.NoError(t, err)
	assert.Contains(t, string(got), "func NewSourceBreaker(")
	assert.NoFileExists(t, filepath.Join(dir, "gone_breaker.go"))
}

// TestFileArgs: a Go file given for a package (mockgen's $GOFILE habit),
// or one that does not exist, is a usage error that says what to write; a
// directory or a pattern that merely ends in .go is a package pattern, as
// for the go command.
func TestFileArgs(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.go"), []byte("package x\n\n//breaker:name=a\ntype A interface{ M() error }\n\n// B.\ntype (\n\t//breaker:name=b\n\tB interface{ M() error }\n\tC interface{ M() error }\n)\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub", "p.go"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "t.go"), []byte("package sub\n"), 0o644))

	var stdout, stderr strings.Builder
	err := generate(&options{patterns: []string{"s.go"}, dir: dir, env: []string{"GOFILE=s.go"}}, &stdout, &stderr)
	assert.Equal(t, 2, exitCode(err))
	assert.Equal(t, "breakergen: s.go: breakergen takes packages, not files: write . (its package), or, for the wrappers of the interfaces in s.go only, -type A,B .\n"+
		"breakergen: in the //go:generate line, write . in place of $GOFILE\n", stderr.String())
	assert.Empty(t, stdout.String())

	stderr.Reset()
	err = fileArgs(&options{patterns: []string{"./sub/t.go", "sub/p.go"}, dir: dir}, &stderr)
	assert.ErrorIs(t, err, errUsage)
	assert.Equal(t, "breakergen: ./sub/t.go: breakergen takes packages, not files: write ./sub (its package), and -type A,B to select interfaces\n", stderr.String())

	// A Go file that does not exist, in a directory that does (or named as
	// a local path), is one too; an import path ending in .go is a pattern.
	stderr.Reset()
	err = generate(&options{patterns: []string{"missing.go"}, dir: dir}, &stdout, &stderr)
	assert.Equal(t, 2, exitCode(err))
	assert.Equal(t, "breakergen: missing.go: no such file; breakergen takes packages, not files: write . (the package of its directory), and -type A,B to select interfaces\n", stderr.String())

	stderr.Reset()
	err = fileArgs(&options{patterns: []string{"s.go", "sub/gone.go", "./new/x.go", "sub/p.go"}, dir: dir}, &stderr)
	assert.ErrorIs(t, err, errUsage)
	assert.Equal(t, "breakergen: s.go: breakergen takes packages, not files: write . (its package), or, for the wrappers of the interfaces in s.go only, -type A,B .\n"+
		"breakergen: sub/gone.go, ./new/x.go: no such files; breakergen takes packages, not files: write ./sub ./new (the packages of their directories), and -type A,B to select interfaces\n", stderr.String())

	stderr.Reset()
	assert.NoError(t, fileArgs(&options{patterns: []string{"sub/p.go", "./...", "./....go", "github.com/nats-io/nats.go", "example.com/m/sub/x.go"}, dir: dir}, &stderr))
	assert.Empty(t, stderr.String())
}

// TestCRLFOutputs: our outputs as git checks them out on Windows with
// core.autocrlf ("\r\n" line endings) are still ours: hidden from the type
// checker, up to date for -check and a run when only their line endings
// differ, rewritten (with "\n") when more does, and removed when their
// source's annotations go.
func TestCRLFOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	dir := t.TempDir()
	writeModule(t, dir)
	src := "package x\n\nimport \"context\"\n\n//breaker:name=s\ntype Source interface {\n\tGet(ctx context.Context) error\n}\n"
	write := func(name, data string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return string(data)
	}
	gen := func(check bool) (string, error) {
		var stdout, stderr strings.Builder
		err := generate(&options{patterns: []string{"."}, check: check, dir: dir, env: goEnv()}, &stdout, &stderr)
		return stderr.String(), err
	}
	write("a.go", src)
	stderr, err := gen(false)
	require.NoError(t, err, stderr)
	lf := read("a_breaker.go")
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	write("a_breaker.go", crlf)

	stderr, err = gen(true)
	assert.NoError(t, err, "-check on an output with CRLF line endings")
	assert.Empty(t, stderr)
	stderr, err = gen(false)
	assert.NoError(t, err, "a run over an output with CRLF line endings")
	assert.Empty(t, stderr)
	assert.Equal(t, crlf, read("a_breaker.go"), "an output up to date but for its line endings is left as it is")

	// A change is written, with "\n" line endings.
	write("a.go", strings.Replace(src, "Get(", "Put(", 1))
	stderr, err = gen(true)
	assert.Error(t, err)
	assert.Contains(t, stderr, "a_breaker.go: would be written\n")
	stderr, err = gen(false)
	require.NoError(t, err, stderr)
	assert.Equal(t, strings.ReplaceAll(lf, "Get", "Put"), read("a_breaker.go"))

	// An output with CRLF line endings whose source lost its annotation
	// is removed.
	write("a_breaker.go", strings.ReplaceAll(read("a_breaker.go"), "\n", "\r\n"))
	write("a.go", strings.Replace(src, "//breaker:name=s\n", "", 1))
	stderr, err = gen(false)
	require.NoError(t, err, stderr)
	assert.NoFileExists(t, filepath.Join(dir, "a_breaker.go"))
}

// TestMentions: a module's go.mod names the runtime's module when a
// require, replace or tool line names it or one of its packages, not when
// it names only a module of its own under it (redisstate), whose path the
// substring test took for it.
func TestMentions(t *testing.T) {
	for gomod, want := range map[string]bool{
		"module x\n\nrequire github.com/breakergen/breakergen v1.2.0\n":                     true,
		"module x\n\nrequire (\n\tgithub.com/breakergen/breakergen v1.2.0 // indirect\n)\n": true,
		"module x\n\ntool github.com/breakergen/breakergen/cmd/breakergen\n":                true,
		"module x\n\nreplace github.com/breakergen/breakergen => ../breakergen\n":           true,
		"module x\n\nrequire github.com/breakergen/breakergen/redisstate v1.2.0\n":          false,
		"module x\n\nrequire github.com/breakergen/breakergenx v1.0.0\n":                    false,
		"module x\n": false,
	} {
		assert.Equal(t, want, mentions(gomod, runtimeModule), gomod)
	}
}
