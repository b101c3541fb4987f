package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/breakergen/breakergen/internal/gotest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"breakergen": main,
	})
}

// TestScript runs the command-line scripts of testdata/script: exit
// codes, usage, what goes to stdout and stderr, and what is written.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           fixtures + "/script",
		UpdateScripts: *update, // -update rewrites the want files too
		Setup: func(env *testscript.Env) error {
			for _, k := range []string{"GOPATH", "GOMODCACHE", "GOCACHE", "GOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOSUMDB", "GOTOOLCHAIN"} {
				if v := os.Getenv(k); v != "" {
					env.Setenv(k, v)
				}
			}
			for _, k := range []string{"GOPATH", "GOMODCACHE", "GOCACHE"} {
				if env.Getenv(k) == "" {
					v, err := goEnvVar(k)
					if err != nil {
						return err
					}
					env.Setenv(k, v)
				}
			}
			env.Setenv("GOFLAGS", "-mod=mod")
			env.Setenv("GOWORK", "off")
			env.Setenv("REPO", repoRoot())
			// Every script runs in a module that depends on this repository.
			gomod := "module example.com/x\n\ngo 1.25.0\n\nrequire github.com/breakergen/breakergen v0.0.0\n\nreplace github.com/breakergen/breakergen => " + repoRoot() + "\n"
			if err := os.WriteFile(filepath.Join(env.WorkDir, "go.mod"), []byte(gomod), 0o644); err != nil {
				return err
			}
			sum, err := os.ReadFile(filepath.Join(repoRoot(), "go.sum"))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.WorkDir, "go.sum"), sum, 0o644)
		},
	})
}

// TestInstall runs the README's install recipes (testdata/install) in a
// module of their own against this checkout, with the go environment of
// the machine: the module cache, the proxy and GOFLAGS the go command here
// uses, so that a warm cache needs no network and a clean one reaches the
// proxy the environment names.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command; skipped with -short")
	}
	goenv, err := gotest.Env()
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: fixtures + "/install",
		Setup: func(env *testscript.Env) error {
			for k, v := range goenv {
				env.Setenv(k, v)
			}
			env.Setenv("GOWORK", "off")
			env.Setenv("REPO", repoRoot())
			return nil
		},
	})
}
