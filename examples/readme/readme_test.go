package readme_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/readme"
	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

const root = "../.."

var update = flag.Bool("update", false, "rewrite the README's output blocks from this run")

// updateBlock replaces the text of one output block of file (relative to
// the repository's root).
func updateBlock(t *testing.T, file, old, new string) {
	path := filepath.Join(root, file)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(data), "\n"+old), "the block to update is not unique")
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), "\n"+old, "\n"+new, 1)), 0o644))
}

// block is one fenced code block of a page (the README or docs/*.md).
type block struct {
	file    string // the page, relative to the repository's root
	line    int    // of the opening fence
	lang    string // after the fence
	source  string // the <!-- KIND: ARG --> marker before it, without the brackets
	section string // the last "## " heading before it
	text    string // without the list indentation
}

func (b block) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// The markers a block may carry:
//
//	from PATH      the block appears verbatim in PATH, which go test compiles
//	output: TEST   the block is what TEST computes (-update rewrites it)
//	file: NAME     a whole file of the "Five minutes" module (TestFiveMinutes)
//	install: HOW   an install recipe (clone: run by TestFiveMinutes)
var marker = regexp.MustCompile(`^\s*<!-- (from \S+|output: \S+|file: \S+|install: \S+) -->$`)

// pages are the README and the docs/ pages, relative to the root.
func pages(t *testing.T) []string {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	out := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		require.NoError(t, err)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func readmeBlocks(t *testing.T) []block { return pageBlocks(t, "README.md") }

func pageBlocks(t *testing.T, file string) []block {
	t.Helper()
	f, err := os.Open(filepath.Join(root, file))
	require.NoError(t, err)
	defer f.Close()
	var blocks []block
	var cur *block
	var indent, source, section string
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && strings.HasPrefix(line, "## "):
			section, source = strings.TrimPrefix(line, "## "), ""
		case cur == nil && marker.MatchString(line):
			source = marker.FindStringSubmatch(line)[1]
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			indent = line[:len(line)-len(trimmed)]
			cur = &block{file: file, line: n, lang: strings.TrimPrefix(trimmed, "```"), source: source, section: section}
			source = ""
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += strings.TrimPrefix(line, indent) + "\n"
		case strings.TrimSpace(line) != "":
			source = "" // a marker applies to the block right after it
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: unterminated code block", file)
	return blocks
}

// TestREADMEBlocks checks the code blocks of the README and of docs/*.md
// against what the repository compiles and runs, so that they cannot rot:
// Go blocks marked "from" must appear verbatim in the file they name
// (compiled by go test), "output" blocks are what their tests compute, the
// README's "file" and "install: clone" blocks are run by TestFiveMinutes,
// and the README's other shell blocks may only run make targets that exist
// and the go commands of its recipes. In docs/ a block without a marker is
// left alone.
func TestREADMEBlocks(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	allowed := []string{
		"go get -tool github.com/breakergen/breakergen/cmd/breakergen",
		"go mod edit -replace github.com/breakergen/breakergen=../breakergen",
		"go mod edit -tool=github.com/breakergen/breakergen/cmd/breakergen",
		"go mod tidy",
		"go get github.com/breakergen/breakergen@VERSION",
		"go generate ./...",
		"go vet ./...",
		"go tool breakergen -check ./...",
	}
	outputs := map[string]string{
		"output: TestREADMEGeneratorErrors": readmeGeneratorErrors(t),
		"output: TestREADMEHealthJSON":      healthJSON(t, "/health/datasources"),
		"output: TestREADMEEventsJSON":      healthJSON(t, "/health/degradation-events?limit=5"),
	}
	seen := map[string]bool{}
	for _, page := range pages(t) {
		blocks := pageBlocks(t, page)
		if page == "README.md" {
			require.NotEmpty(t, blocks)
		}
		for _, b := range blocks {
			where := b.where()
			kind, _, _ := strings.Cut(b.source, " ")
			if page != "README.md" && (kind == "file:" || kind == "install:") {
				t.Errorf("%s: a %q block belongs in the README", where, b.source)
				continue
			}
			switch {
			case kind == "from":
				data, err := os.ReadFile(filepath.Join(root, strings.TrimPrefix(b.source, "from ")))
				require.NoError(t, err, where)
				assert.True(t, containsIndented(string(data), b.text), "%s: the block is not in %s:\n%s", where, b.source, b.text)
			case kind == "output:":
				want, ok := outputs[b.source]
				require.True(t, ok, "%s: no test makes %s", where, b.source)
				seen[b.source] = true
				if *update && want != b.text {
					updateBlock(t, page, b.text, want)
					continue
				}
				assert.Equal(t, want, b.text, "%s (go test ./examples/readme -update rewrites it)", where)
			case kind == "file:":
				assert.True(t, strings.HasPrefix(b.section, "Five minutes"), "%s: a file block outside \"Five minutes\"", where)
			case b.source == "install: pinned":
				assert.Equal(t, "//go:generate go run github.com/breakergen/breakergen/cmd/breakergen@VERSION\n", b.text, where)
			case b.lang == "sh" && (page == "README.md" || b.source == "install: clone"):
				for _, cmd := range shellCommands(b.text) {
					if target, ok := strings.CutPrefix(cmd, "make "); ok {
						assert.Regexp(t, "(?m)^"+regexp.QuoteMeta(target)+":", string(makefile), "%s: no make target %q", where, target)
						continue
					}
					assert.Contains(t, allowed, cmd, where)
				}
			case page == "README.md":
				t.Errorf("%s: a %q block with no <!-- from PATH --> or <!-- output: TEST --> marker", where, b.lang)
			}
		}
	}
	for name := range outputs {
		assert.True(t, seen[name], "no page shows %s", name)
	}
}

// shellCommands returns the commands of a shell block, without comments.
func shellCommands(text string) []string {
	var out []string
	for _, cmd := range strings.Split(strings.TrimSpace(text), "\n") {
		cmd, _, _ = strings.Cut(cmd, "#")
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			out = append(out, cmd)
		}
	}
	return out
}

// readmeGeneratorErrors is what the README shows of the generator's errors:
// lines of two golden cases of cmd/breakergen, whose tests run them.
func readmeGeneratorErrors(t *testing.T) string {
	var out string
	for _, c := range []string{"msg_unknown_key_hint", "msg_conflict"} {
		data, err := os.ReadFile(filepath.Join(root, "testdata/cases", c+".txtar"))
		require.NoError(t, err)
		_, stderr, ok := strings.Cut(string(data), "-- want/stderr --\n")
		require.True(t, ok, c)
		out += strings.SplitAfter(stderr, "\n")[0]
	}
	return out
}

// healthJSON is the answer to GET target for the README: eastmoney tripped
// by five 502s at a fixed instant.
func healthJSON(t *testing.T, target string) string {
	clk := &fixedClock{now: time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)}
	reg := runtime.NewRegistry(runtime.WithClock(clk), runtime.WithoutEnv(), runtime.WithLogger(discard()),
		runtime.WithRateLimit("eastmoney", 1000, 1000)) // this clock never refills the bucket
	src := readme.NewHTTPQuoteSource("http://quotes.invalid")
	src.Errs["600519"] = &readme.StatusError{Code: 502}
	w := readme.NewQuoteSourceBreaker(src, reg)
	for range 5 {
		_, _ = w.Quote(context.Background(), "600519")
	}
	rec := httptest.NewRecorder()
	httphealth.New(reg, httphealth.WithClock(clk)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var out bytes.Buffer
	require.NoError(t, json.Indent(&out, bytes.TrimSpace(rec.Body.Bytes()), "", "  "))
	return out.String() + "\n"
}

func TestWire(t *testing.T) {
	outcome, mux := readme.Wire(context.Background(), "http://quotes.invalid")
	assert.Equal(t, "600519 1688.00", outcome)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ops/health/datasources", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `"eastmoney"`)
}

type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

func (c *fixedClock) AfterFunc(time.Duration, func()) runtime.Timer { return stopped{} }

type stopped struct{}

func (stopped) Stop() bool { return true }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// containsIndented reports whether the lines of block appear in file as a
// run of consecutive lines, all with one same extra indentation of tabs (a
// snippet from a function body loses its indentation in the README).
func containsIndented(file, block string) bool {
	fl := strings.Split(file, "\n")
	bl := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	for start := 0; start+len(bl) <= len(fl); start++ {
		for _, prefix := range []string{"", "\t", "\t\t", "\t\t\t"} {
			ok := true
			for i, l := range bl {
				if l == "" && strings.TrimSpace(fl[start+i]) == "" {
					continue
				}
				if fl[start+i] != prefix+l {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// TestREADMEErrorTypes: the README's error types retry a 5xx and cool down
// on a ban, as the text says.
func TestREADMEErrorTypes(t *testing.T) {
	ctx := context.Background()
	assert.True(t, runtime.Retryable(ctx, &readme.StatusError{Code: 503}))
	assert.False(t, runtime.Retryable(ctx, &readme.StatusError{Code: 404}))
	ban := &readme.BanError{StatusError: readme.StatusError{Code: 403}, Wait: 30 * time.Second}
	assert.False(t, runtime.Retryable(ctx, ban))

	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(discard()))
	b := reg.Breaker(runtime.Config{Name: "eastmoney"})
	_ = b.Do(ctx, func(context.Context) error { return ban })
	assert.Equal(t, runtime.Open, b.State(), "one ban opens the breaker at once")
	assert.Equal(t, "retry after 30s: readme.BanError: quote API: HTTP 403", reg.Events(1)[0].Reason)
}
