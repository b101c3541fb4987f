package main

import (
	"bytes"
	"context"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/annotation"
	"github.com/breakergen/breakergen/cmd/breakergen/internal/ifacegen"
)

// fuzzSeeds is how many seeds TestGenerateSeeds runs, in one module:
// 15 s on this two-core machine with -race (go test -race -run
// TestGenerateSeeds -v ./cmd/breakergen, warm caches).
const fuzzSeeds = 20

// fuzzChains is how this breakergen decides on fallback chains (the
// packages' tests call NewXChain too where there is one): for the
// interfaces whose line has the chain flag (SPEC §6) once the annotation
// parser knows it, for every interface before.
func fuzzChains() ifacegen.Chains {
	if _, errs := annotation.Parse("//breaker:chain", token.Position{}, annotation.OnInterface); len(errs) == 0 {
		return ifacegen.ChainsFlag
	}
	return ifacegen.ChainsEvery
}

// TestGenerateSeeds runs the generator fuzzer on seeds 1 to fuzzSeeds,
// one package each (see package ifacegen), in one temporary module:
// breakergen, run in-process, must generate them with nothing but
// warnings on stderr; the module must pass go test -vet=all, so the
// wrappers compile and vet clean and the tests ifacegen wrote pass: every
// method of every wrapper (and chain) forwards every argument and result
// unchanged, a keyed method's key gets a breaker of its own, and a failing
// key trips alone; and a second run with -check must find nothing to
// change.
//
// BREAKERGEN_FUZZ_SEEDS=7,12 runs those seeds instead (to reproduce a
// failure of FuzzGenerate). The six generator bugs it found first are
// fixed and pinned by the golden cases fuzz_found and
// unexported_foreign_field; the open ones (ifacegen.KnownBugs) are
// avoided unless BREAKERGEN_FUZZ_BUGS names them (a comma list, or all),
// here and in FuzzGenerate.
func TestGenerateSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("generates, vets and tests a module of random interfaces")
	}
	var seeds []uint64
	if env := os.Getenv("BREAKERGEN_FUZZ_SEEDS"); env != "" {
		for _, s := range strings.Split(env, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
			require.NoError(t, err, "BREAKERGEN_FUZZ_SEEDS")
			seeds = append(seeds, n)
		}
	} else {
		for s := range uint64(fuzzSeeds) {
			seeds = append(seeds, s+1)
		}
	}
	checkSeeds(t, false, seeds...)
}

// FuzzGenerate is the generator fuzzer, with the seed of ifacegen as its
// input (a package of random annotated interfaces; TestGenerateSeeds says
// what is checked):
//
//	go test -run '^$' -fuzz FuzzGenerate -fuzztime 10m -parallel 1 ./cmd/breakergen/
//
// or make fuzz FUZZTIME=10m. An input takes a few seconds, the go test
// -vet=all of a temporary module (the -check run is left out). The
// fuzzing engine kills a worker whose input runs over 10 s ("fuzzing
// process hung or terminated unexpectedly: exit status 2"), so an input
// whose go test outruns fuzzBudget is skipped, and make fuzz runs one
// worker, which on two cores makes that rarer. A failing seed is kept in
// testdata/fuzz/FuzzGenerate, which every go test reruns; the module it
// yields is copied to $BREAKERGEN_ARTIFACTS/fuzz when that is set.
func FuzzGenerate(f *testing.F) {
	if testing.Short() {
		f.Skip("generates, vets and tests a module of random interfaces")
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkSeeds(t, true, seed)
	})
}

// fuzzBudget is how long an input of FuzzGenerate may take before its go
// test is stopped and the input skipped: the fuzzing engine kills a worker
// whose input runs over 10 s, which a busy machine reaches.
const fuzzBudget = 7 * time.Second

// checkSeeds writes the packages of seeds into a temporary module, runs
// breakergen on it in-process, and then go test -vet=all there. Unless
// fuzzing, breakergen -check runs after that and must find nothing to
// change; when fuzzing, an input that would outrun fuzzBudget is skipped.
func checkSeeds(t *testing.T, fuzzing bool, seeds ...uint64) {
	t.Helper()
	ctx := t.Context()
	if fuzzing {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, fuzzBudget)
		defer cancel()
	}
	opts := ifacegen.Options{Chains: fuzzChains()}
	switch env := os.Getenv("BREAKERGEN_FUZZ_BUGS"); env {
	case "":
	case "all":
		opts.Reproduce = ifacegen.KnownBugs
	default:
		opts.Reproduce = strings.Split(env, ",")
	}
	dir := t.TempDir()
	writeModule(t, dir)
	for _, seed := range seeds {
		p, err := ifacegen.Generate("example.com/x", seed, opts)
		require.NoError(t, err, "seed %d", seed)
		for name, data := range p.Files {
			path := filepath.Join(dir, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, data, 0o644))
		}
	}
	failed := true
	defer func() {
		if failed {
			keepFuzzModule(t, dir, seeds)
		}
	}()

	var stdout, stderr bytes.Buffer
	o := &options{patterns: []string{"./..."}, dir: dir, env: goEnv()}
	if err := generate(o, &stdout, &stderr); err != nil {
		// Tell a generator bug from a fuzzer bug: the packages alone
		// (the tests aside, which call the wrappers) must compile.
		cmd := exec.Command("go", "build", "./...")
		cmd.Dir, cmd.Env = dir, goEnv()
		out, berr := cmd.CombinedOutput()
		require.NoError(t, berr, "seeds %v: ifacegen wrote invalid Go:\n%s", seeds, out)
		t.Fatalf("seeds %v: breakergen failed: %v\n%s", seeds, err, stderr.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		require.True(t, l == "" || strings.Contains(l, ": warning: "), "seeds %v: breakergen printed more than warnings:\n%s", seeds, stderr.String())
	}
	// go vet's every check, and the tests, in one go command.
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-vet=all", "./...")
	cmd.Dir, cmd.Env = dir, goEnv()
	cmd.WaitDelay = 500 * time.Millisecond // the go command's children may hold its output
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		failed = false
		t.Skipf("seeds %v: go test took over %v (a busy machine); skipped", seeds, fuzzBudget)
	}
	require.NoError(t, err, "seeds %v: go test -vet=all:\n%s", seeds, out)
	if fuzzing {
		failed = false
		return
	}

	// The output is up to date: a second run would write nothing.
	stderr.Reset()
	o.check = true
	require.NoError(t, generate(o, &stdout, &stderr), "seeds %v: a second run would change files:\n%s", seeds, stderr.String())
	failed = false
}

// keepFuzzModule says how to rerun seeds, and copies the module of the
// failed run to $BREAKERGEN_ARTIFACTS/fuzz/seeds-... when that is set.
func keepFuzzModule(t *testing.T, dir string, seeds []uint64) {
	var ids []string
	for _, s := range seeds {
		ids = append(ids, strconv.FormatUint(s, 10))
	}
	t.Logf("rerun: BREAKERGEN_FUZZ_SEEDS=%s go test -run TestGenerateSeeds ./cmd/breakergen", strings.Join(ids, ","))
	root := os.Getenv("BREAKERGEN_ARTIFACTS")
	if root == "" {
		t.Log("set BREAKERGEN_ARTIFACTS to keep the module")
		return
	}
	dst := filepath.Join(root, "fuzz", "seeds-"+strings.Join(ids, "-"))
	_ = os.RemoveAll(dst)
	for name, data := range snapshot(t, dir) {
		p := filepath.Join(dst, filepath.FromSlash(name))
		if os.MkdirAll(filepath.Dir(p), 0o755) != nil || os.WriteFile(p, []byte(data), 0o644) != nil {
			t.Logf("could not keep the module in %s", dst)
			return
		}
	}
	t.Logf("the module is kept in %s", dst)
}
