package load

import (
	"path/filepath"
	"strings"
)

// OutputOf is the file the wrappers of the interfaces declared in src go
// to: f.go gives f_breaker.go. The end of a name that the go command reads
// as a constraint stays at the end, so that the wrappers build where their
// interfaces do: f_test.go gives f_breaker_test.go, f_windows.go
// f_breaker_windows.go, f_linux_arm64_test.go
// f_breaker_linux_arm64_test.go ("Build Constraints" in go help
// buildconstraint).
func OutputOf(src string) string {
	dir, base := filepath.Split(src)
	stem := strings.TrimSuffix(base, ".go")
	cut := len(stem) - len(constraintSuffix(stem))
	return filepath.Join(dir, stem[:cut]+"_breaker"+stem[cut:]+".go")
}

// SourceOf is the source file whose wrappers go to the output path
// (OutputOf's inverse), or "" when no source's wrappers go there. A name
// that breakergen gave before it kept a constraint at the end
// (f_windows_breaker.go, which built everywhere) is an output too, of
// f_windows.go, so that a run replaces it.
func SourceOf(path string) string {
	dir, base := filepath.Split(path)
	stem, ok := strings.CutSuffix(base, ".go")
	if !ok {
		return ""
	}
	const mark = "_breaker"
	for i := strings.LastIndex(stem, mark); i >= 0; i = strings.LastIndex(stem[:i], mark) {
		src := filepath.Join(dir, stem[:i]+stem[i+len(mark):]+".go")
		if OutputOf(src) == path {
			return src
		}
	}
	if s, ok := strings.CutSuffix(stem, mark+"_test"); ok {
		return filepath.Join(dir, s+"_test.go")
	}
	if s, ok := strings.CutSuffix(stem, mark); ok {
		return filepath.Join(dir, s+".go")
	}
	return ""
}

// constraintSuffix returns the end of a file name without its .go that the
// go command reads as constraints, as go/build's goodOSArchFile does:
// _test, and before it _GOOS, _GOARCH or _GOOS_GOARCH, after the name's
// first underscore; "" when there is none.
func constraintSuffix(stem string) string {
	i := strings.Index(stem, "_")
	if i < 0 {
		return ""
	}
	l := strings.Split(stem[i:], "_") // l[0] is ""
	n := len(l)
	if l[n-1] == "test" {
		n--
	}
	switch {
	case n >= 2 && knownOS[l[n-2]] && knownArch[l[n-1]]:
		n -= 2
	case n >= 1 && (knownOS[l[n-1]] || knownArch[l[n-1]]):
		n--
	}
	if n == len(l) {
		return ""
	}
	return "_" + strings.Join(l[n:], "_")
}

// knownOS and knownArch are the go command's (internal/syslist, Go 1.26),
// past and future ports included: a file named for any of them is
// constrained.
var knownOS = set("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos")

var knownArch = set("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm")

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
