package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/sim"
)

// simUsage is `breakergen sim -h`: the simulator's manual.
const simUsage = `usage: breakergen sim [-set 'NAME:key=value ...']... [-sets FILE] [-outage N] [-carry] [-html FILE] RECORDING

sim replays a recording of real calls (written by runtime.WithRecorder, see
docs/rehearse.md) through the runtime's own breakers, on a synthetic clock,
once for each candidate setting, and prints what each would have done:

    breakergen sim -set 'tdx:threshold=5' -set 'tdx:window=100 failrate=50%' calls.rec

A candidate is a breaker's name, a colon and keys in the annotation's
grammar (a name may hold colons: 'fallback:sina:reset=5s'; 'tdx:' alone
replays the defaults). Keys left out take the runtime's defaults, not the
recorded breaker's settings. Replayed keys: threshold, reset, jitter,
halfopen, successes, window, failrate, minimum, slow, slowrate, inflight.
-sets FILE reads one candidate a line (blank lines and # comments
skipped), after the -set ones. RECORDING "-" is the standard input. A
recording cut short (no end line) is replayed as far as it goes; a last
line without its line break, cut as it was written, is ignored, and the
report says so.

Replay: every call of the candidate's breaker starts at its recorded
offset and ends after its recorded duration (at one instant, ends before
starts). A call the recording says reached the upstream ends with what
the upstream did: success; failure (with the cooldown it asked for, if
any); ignored, invalid and canceled count as neither; an injected fault is
a failure. A call the recorded breaker (or its limiter, throttle,
bulkhead or budget) refused never reached the upstream, so its outcome is
unknown: it is offered to the candidate and, if admitted, counts as
neither success nor failure (as the refusal counted live), or with -carry
takes the outcome of the last call of that breaker that reached the
upstream (an outage goes on while the recorded breaker was OPEN). A call
the candidate refuses is counted as refused. Jitter draws are seeded: the same
recording and candidates give the same report, byte for byte.

Columns, per candidate:
    calls     the breaker's recorded calls
    trips     CLOSED -> OPEN transitions
    refused   calls the candidate refused
    open      time spent OPEN (HALF_OPEN excluded), until the last call ends
    outages   outages in the recording: runs of at least -outage calls in a
              row that failed upstream (failure or injected; refused calls
              between them neither break nor lengthen a run)
    to trip   for each outage, its calls from its first to the trip, the
              tripping call included ("none": no trip before the next
              outage; "open": not CLOSED when it began); past six outages,
              their median (least-most), how many did not trip ("N not")
              and how many began while it was not CLOSED ("N open")
    first trip  the first trip's reason, as the runtime words it

-html FILE also writes a page with each candidate's state over time.

Flags:
`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// runSim is `breakergen sim ARGS`.
func runSim(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("breakergen sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sets stringList
	fs.Var(&sets, "set", "a candidate `'NAME:key=value ...'`; repeatable")
	setsFile := fs.String("sets", "", "read candidates from `FILE`, one a line")
	htmlFile := fs.String("html", "", "write the state bands to `FILE` (HTML)")
	outage := fs.Int("outage", 5, "`N` failures in a row make an outage")
	carry := fs.Bool("carry", false, "a call that never reached the upstream takes, when admitted, the outcome of the last one that did (default: neither)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), simUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	usage := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "breakergen sim: "+format+"\n", a...)
		fs.Usage()
		return errUsage
	}
	if fs.NArg() != 1 {
		return usage("want one recording, got %d arguments", fs.NArg())
	}
	if *outage < 1 {
		return usage("-outage %d: want at least 1", *outage)
	}
	var cands []sim.Candidate
	for _, s := range sets {
		c, err := sim.ParseCandidate(s, "-set")
		if err != nil {
			return usage("%v", err)
		}
		cands = append(cands, c)
	}

	if *setsFile != "" {
		f, err := os.Open(*setsFile)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		more, err := sim.ReadCandidates(f, *setsFile)
		f.Close()
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		cands = append(cands, more...)
	}
	if len(cands) == 0 {
		return usage("no candidate: give -set or -sets")
	}
	for _, c := range cands {
		for _, w := range c.Warnings { // what the generator would warn of in these keys
			fmt.Fprintf(stderr, "breakergen sim: %s\n", w)
		}
	}
	in := stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		defer f.Close()
		in = f
	}
	if *htmlFile != "" && isFile(in, *htmlFile) {
		return usage("-html %s: that is the recording; give the page another file", *htmlFile)
	}
	rec, err := sim.Read(in)
	if err != nil {
		return fmt.Errorf("sim: %s: %w", fs.Arg(0), err)
	}
	var results []sim.Result
	for _, c := range cands {
		if !recorded(rec, c.Name) {
			return fmt.Errorf("sim: %s: no call of breaker %q in the recording (%s)", fs.Arg(0), c.Name, hasNames(rec.Names))
		}
		results = append(results, sim.Replay(rec, c, sim.Options{Outage: *outage, CarryLast: *carry}))
	}
	if err := sim.WriteText(stdout, rec, *outage, results); err != nil {
		return err
	}
	if *htmlFile != "" {
		var b strings.Builder
		if err := sim.WriteHTML(&b, rec, results); err != nil {
			return err
		}
		if err := os.WriteFile(*htmlFile, []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	return nil
}

func recorded(rec *sim.Recording, name string) bool {
	for _, n := range rec.Names {
		if n == name {
			return true
		}
	}
	return false
}

// isFile reports whether in is an open file that is the file named name
// (os.SameFile), so that -html does not write over the recording.
func isFile(in io.Reader, name string) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}

// hasNames says which breakers a recording has calls of, for the error
// of a candidate it has none of.
func hasNames(names []string) string {
	if len(names) == 0 {
		return "it has no calls"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "it has calls of " + strings.Join(q, ", ")
}
