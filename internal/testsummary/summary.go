package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// MissingPrefix starts the reason of a skip for a missing component (a
// server, a browser, a tool), followed by its name and how to install it:
//
//	t.Skip("missing component: promtool (apt-get install prometheus)")
//
// Under CI=true such a skip fails the report.
const MissingPrefix = "missing component: "

// errFailed: the tests failed, or CI met a missing component; what went
// wrong has been printed.
var errFailed = errors.New("failed")

// Skip is one skipped test, as -record writes it.
type Skip struct {
	Package string `json:"package"`
	Test    string `json:"test"`
	Reason  string `json:"reason"`
}

func run(args []string, stdout, stderr io.Writer, ci bool) error {
	fs := flag.NewFlagSet("testsummary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	record := fs.String("record", "", "append each skipped test to this `file` (JSON lines)")
	report := fs.Bool("report", false, "print the skips recorded in the files given")
	allocs := fs.Bool("allocs", false, "run only the allocation tests (*Alloc* in packages that call testing.AllocsPerRun)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *report {
		var skips []Skip
		for _, name := range fs.Args() {
			s, err := readSkips(name)
			if err != nil {
				return err
			}
			skips = append(skips, s...)
		}
		return writeReport(stdout, skips, ci)
	}
	cmdline := fs.Args()
	if len(cmdline) < 2 || cmdline[1] != "test" {
		return errors.New("usage: testsummary [-record FILE] [-allocs] go test [flags] [packages], or testsummary -report FILE")
	}
	if *allocs {
		var err error
		if cmdline, err = allocTests(cmdline); err != nil {
			return err
		}
		if cmdline == nil {
			return nil
		}
		fmt.Fprintln(stdout, strings.Join(cmdline, " "))
	}
	cmdline = slices.Insert(slices.Clone(cmdline), 2, "-json")
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	skips, perr := summarize(out, stdout)
	werr := cmd.Wait()
	if *record != "" && len(skips) > 0 {
		if err := appendSkips(*record, skips); err != nil {
			return err
		}
	}
	if perr != nil {
		return perr
	}
	if werr != nil {
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			return errFailed
		}
		return werr
	}
	return nil
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output
}

// line is one line of output, with the test (or "" for the package) it
// belongs to.
type line struct {
	test, text string
}

type pkgRun struct {
	lines []line
	ended map[string]string // test → pass, fail or skip
}

// summarize reads go test -json from r and writes what go test without -v
// would: for each package, its own lines (but PASS) and, when it failed,
// the lines of its failed (or unfinished) tests; build output as it comes.
// It returns the skipped tests.
func summarize(r io.Reader, w io.Writer) ([]Skip, error) {
	pkgs := map[string]*pkgRun{}
	var order []string
	var skips []Skip
	flush := func(name string, failed bool) {
		p := pkgs[name]
		for _, l := range p.lines {
			if l.test == "" {
				if !failed && l.text == "PASS\n" {
					continue
				}
				io.WriteString(w, l.text)
				continue
			}
			if !failed || p.ended[l.test] == "pass" || p.ended[l.test] == "skip" || progress(l.text) {
				continue
			}
			io.WriteString(w, l.text)
		}
		delete(pkgs, name)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		raw := sc.Bytes()
		var ev event
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ev) != nil {
			fmt.Fprintf(w, "%s\n", raw) // not an event: pass it on
			continue
		}
		if ev.Action == "build-output" {
			io.WriteString(w, ev.Output)
			continue
		}
		if ev.Package == "" {
			continue
		}
		p := pkgs[ev.Package]
		if p == nil {
			p = &pkgRun{ended: map[string]string{}}
			pkgs[ev.Package] = p
			order = append(order, ev.Package)
		}
		switch ev.Action {
		case "output":
			p.lines = append(p.lines, line{ev.Test, ev.Output})
		case "pass", "fail", "skip":
			if ev.Test != "" {
				p.ended[ev.Test] = ev.Action
				if ev.Action == "skip" {
					skips = append(skips, Skip{Package: ev.Package, Test: ev.Test, Reason: skipReason(p.lines, ev.Test)})
				}
				continue
			}
			flush(ev.Package, ev.Action == "fail")
		}
	}
	for _, name := range order { // ended without a package event (killed)
		if pkgs[name] != nil {
			flush(name, true)
		}
	}
	return skips, sc.Err()
}

// progress reports whether text is one of the lines -v adds.
func progress(text string) bool {
	t := strings.TrimLeft(text, " ")
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- SKIP"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// logLine matches the first line of a t.Log or t.Skip message.
var logLine = regexp.MustCompile(`^\s+[\w.\-]+\.go:\d+: `)

// skipReason is the last message test logged before it skipped, without
// its file:line, its continuation lines joined by " | ".
func skipReason(lines []line, test string) string {
	var own []string
	for _, l := range lines {
		if l.test == test && !progress(l.text) && !strings.HasPrefix(strings.TrimLeft(l.text, " "), "--- ") {
			own = append(own, l.text)
		}
	}
	for i := len(own) - 1; i >= 0; i-- {
		loc := logLine.FindStringIndex(own[i])
		if loc == nil {
			continue
		}
		parts := []string{strings.TrimSpace(own[i][loc[1]:])}
		for _, c := range own[i+1:] {
			if c = strings.TrimSpace(c); c != "" {
				parts = append(parts, c)
			}
		}
		reason := strings.Join(parts, " | ")
		if len(reason) > 300 {
			reason = reason[:300] + "…"
		}
		return reason
	}
	return "(no reason given)"
}

func appendSkips(name string, skips []Skip) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, s := range skips {
		if err := enc.Encode(s); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// readSkips reads a -record file; a file that does not exist holds none.
func readSkips(name string) ([]Skip, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var skips []Skip
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var s Skip
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		skips = append(skips, s)
	}
	return skips, nil
}

// modulePrefix is cut from package paths in the report.
const modulePrefix = "github.com/breakergen/breakergen/"

// writeReport prints how many tests skipped and each reason once, most
// frequent first, with the tests that gave it. With ci, a skip for a
// missing component is an error.
func writeReport(w io.Writer, skips []Skip, ci bool) error {
	if len(skips) == 0 {
		fmt.Fprintln(w, "skipped: no tests")
		return nil
	}
	type group struct {
		reason string
		tests  map[string][]string // package → tests
		n      int
	}
	byReason := map[string]*group{}
	for _, s := range skips {
		g := byReason[s.Reason]
		if g == nil {
			g = &group{reason: s.Reason, tests: map[string][]string{}}
			byReason[s.Reason] = g
		}
		pkg := strings.TrimPrefix(s.Package, modulePrefix)
		if !slices.Contains(g.tests[pkg], s.Test) {
			g.tests[pkg] = append(g.tests[pkg], s.Test)
			g.n++
		}
	}
	groups := make([]*group, 0, len(byReason))
	total := 0
	for _, g := range byReason {
		groups = append(groups, g)
		total += g.n
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].n != groups[j].n {
			return groups[i].n > groups[j].n
		}
		return groups[i].reason < groups[j].reason
	})
	fmt.Fprintf(w, "skipped: %d %s, for %d %s (go test -v shows each):\n", total, plural(total, "test"), len(groups), plural(len(groups), "reason"))
	var missing int
	for _, g := range groups {
		fmt.Fprintf(w, "  %3d  %s\n", g.n, g.reason)
		pkgs := make([]string, 0, len(g.tests))
		for p := range g.tests {
			pkgs = append(pkgs, p)
		}
		sort.Strings(pkgs)
		for _, p := range pkgs {
			fmt.Fprintf(w, "       %s: %s\n", p, strings.Join(g.tests[p], ", "))
		}
		if strings.Contains(g.reason, MissingPrefix) {
			missing += g.n
		}
	}
	if ci && missing > 0 {
		fmt.Fprintf(w, "FAIL: CI=true and %d %s skipped for a missing component (%q): CI installs every component (.ci/run)\n",
			missing, plural(missing, "test"), strings.TrimSpace(MissingPrefix))
		return errFailed
	}
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
