package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// allocPattern is the -run pattern of the allocation pass: every test that
// calls testing.AllocsPerRun has it in its name ([checkAllocNames]).
const allocPattern = "Alloc"

// allocTests turns `go test [flags] [packages]` into the run of the
// allocation tests of those packages: the packages whose test files call
// testing.AllocsPerRun, -run Alloc. Flags take the -name=value form. It
// returns nil when no package has such a test.
func allocTests(cmdline []string) ([]string, error) {
	var flags, patterns []string
	for _, a := range cmdline[2:] {
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		} else {
			patterns = append(patterns, a)
		}
	}
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	list := exec.Command(cmdline[0], append([]string{"list", "-f",
		`{{.ImportPath}}{{range .TestGoFiles}} {{$.Dir}}/{{.}}{{end}}{{range .XTestGoFiles}} {{$.Dir}}/{{.}}{{end}}`},
		patterns...)...)
	list.Stderr = os.Stderr
	out, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(patterns, " "), err)
	}
	var pkgs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		for _, name := range f[1:] {
			src, err := os.ReadFile(name)
			if err != nil {
				return nil, err
			}
			if bytes.Contains(src, []byte("testing.AllocsPerRun(")) {
				pkgs = append(pkgs, f[0])
				break
			}
		}
	}
	if len(pkgs) == 0 {
		return nil, nil
	}
	run := append([]string{cmdline[0], "test"}, flags...)
	run = append(run, "-run", allocPattern)
	return append(run, pkgs...), nil
}

// checkAllocNames reports every call of testing.AllocsPerRun in a test file
// under root that is not inside a Test function whose name has "Alloc" in
// it: the allocation pass (-allocs) would not run it.
func checkAllocNames(root string) error {
	var errs []error
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			named := fn.Recv == nil && strings.HasPrefix(name, "Test") && strings.Contains(name, allocPattern)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || named {
					return !named
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "AllocsPerRun" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "testing" {
						rel, _ := filepath.Rel(root, path)
						errs = append(errs, fmt.Errorf("%s:%d: testing.AllocsPerRun in %s: call it in a Test function with %q in its name, which the allocation pass (make allocs) runs without -race",
							rel, fset.Position(call.Pos()).Line, name, allocPattern))
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}
