package load

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// Package patterns are matched here as the go command matches them (go
// help packages), for two jobs: finding the directories of local patterns
// without asking the go command (localDirs), and telling which patterns
// matched nothing (matchesAny), which the go command only warns about.

// isLocal reports whether pattern names directories rather than import
// paths: ".", "..", "./x", "../x" and absolute paths, with or without
// wildcards.
func isLocal(pattern string) bool {
	return pattern == "." || pattern == ".." || strings.HasPrefix(pattern, "./") || strings.HasPrefix(pattern, "../") || filepath.IsAbs(pattern)
}

// isMeta reports whether pattern is one of the go command's meta-patterns.
func isMeta(pattern string) bool {
	switch pattern {
	case "all", "std", "cmd", "tool", "work":
		return true
	}
	return false
}

// matchPattern returns a function reporting whether a slash-separated name
// (an import path, or a local directory as the go command writes it)
// matches pattern, in which "..." matches any string, slashes included,
// with the go command's two exceptions: a trailing "/..." also matches the
// empty string (x/... matches x), and a "vendor" element that is not the
// last is matched only by a literal "vendor" (./... does not match
// ./vendor/x, ./vendor/... does). It is adapted from the Go project's
// cmd/internal/pkgpattern.MatchPattern (Copyright The Go Authors; the
// BSD-style license of the Go distribution), so that breakergen reads a
// pattern exactly as go generate's go command does.
func matchPattern(pattern string) func(name string) bool {
	const vendorChar = "\x00" // stands for a vendor element no wildcard matches
	if strings.Contains(pattern, vendorChar) || !utf8.ValidString(pattern) {
		return func(string) bool { return false }
	}
	re := replaceVendor(regexp.QuoteMeta(pattern), vendorChar)
	switch {
	case strings.HasSuffix(re, `/`+vendorChar+`/\.\.\.`):
		re = strings.TrimSuffix(re, `/`+vendorChar+`/\.\.\.`) + `(/vendor|/` + vendorChar + `/\.\.\.)`
	case re == vendorChar+`/\.\.\.`:
		re = `(/vendor|/` + vendorChar + `/\.\.\.)`
	}
	if strings.HasSuffix(re, `/\.\.\.`) {
		re = strings.TrimSuffix(re, `/\.\.\.`) + `(/\.\.\.)?`
	}
	re = strings.ReplaceAll(re, `\.\.\.`, `[^`+vendorChar+`]*`)
	reg := regexp.MustCompile(`^` + re + `$`)
	return func(name string) bool {
		if strings.Contains(name, vendorChar) {
			return false
		}
		return reg.MatchString(replaceVendor(name, vendorChar))
	}
}

// replaceVendor replaces the "vendor" elements of the slash-separated x
// but the last with repl.
func replaceVendor(x, repl string) string {
	if !strings.Contains(x, "vendor") {
		return x
	}
	elem := strings.Split(x, "/")
	for i := range len(elem) - 1 {
		if elem[i] == "vendor" {
			elem[i] = repl
		}
	}
	return strings.Join(elem, "/")
}

// localPattern is a local pattern made ready for matching directories.
type localPattern struct {
	lit string // the directory a pattern without "..." names; else:

	match func(name string) bool // matches a directory's name, as the go command writes it
	top   string                 // the directory its walk starts at, as the pattern writes it
	walk  string                 // and as this process reaches it
	dot   bool                   // names start with "./"
}

// newLocalPattern prepares the local pattern for matching directories; a
// relative pattern is relative to base. As the go command does
// (search.Match.MatchDirs), a walk starts at the pattern's directory before
// its first "...", and each directory it reaches is named by joining that
// directory, as the pattern writes it, with the path below it, and "./" in
// front when the pattern has it: ./svc_... names ./svc_a, ../m/... names
// ../m/x.
func newLocalPattern(base, pattern string) *localPattern {
	clean := filepath.Clean(pattern)
	i := strings.Index(clean, "...")
	if i < 0 {
		if !filepath.IsAbs(clean) {
			clean = filepath.Join(base, clean)
		}
		return &localPattern{lit: clean}
	}
	lp := &localPattern{}
	if clean != "." && strings.HasPrefix(pattern, "./") {
		// Clean drops the "./", which the pattern's names keep.
		lp.dot = true
		clean = "." + string(filepath.Separator) + clean
		i += 2
	}
	lp.match = matchPattern(filepath.ToSlash(clean))
	dir, _ := filepath.Split(clean[:i])
	lp.top = filepath.Clean(dir) // "" cleans to "."
	lp.walk = lp.top
	if !filepath.IsAbs(lp.top) {
		lp.walk = filepath.Join(base, lp.top)
	}
	return lp
}

// matches reports whether the pattern matches the directory dir, clean,
// and absolute when base was (go/packages reports a package's directory
// absolute).
func (lp *localPattern) matches(dir string) bool {
	if lp.match == nil {
		return dir == lp.lit
	}
	r, err := filepath.Rel(lp.walk, dir)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return false // the go command finds only what its walk reaches
	}
	name := filepath.ToSlash(filepath.Join(lp.top, r))
	if lp.dot {
		name = "./" + name
	}
	return lp.match(name)
}

// localDirs returns the directories that local patterns (".", "./x",
// "./x/...", "./svc_...", absolute paths) can name, walking wildcards the
// way the go command does (skipping testdata, hidden and _ directories,
// the directories the module's go.mod ignores, and nested modules). ok is
// false when a pattern is not local.
func localDirs(base string, patterns []string) (dirs []string, ok bool) {
	if base == "" {
		var err error
		if base, err = os.Getwd(); err != nil {
			return nil, false
		}
	}
	for _, pat := range patterns {
		if !isLocal(pat) {
			return nil, false
		}
	}
	for _, pat := range patterns {
		lp := newLocalPattern(base, pat)
		if lp.match == nil {
			dirs = append(dirs, lp.lit)
			continue
		}
		vendor := strings.Contains(pat, "vendor")
		ign := moduleIgnores(lp.walk)
		err := filepath.WalkDir(lp.walk, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			elem := d.Name()
			if path == lp.walk {
				elem = filepath.Base(lp.top) // ".", "..", or what the pattern names
			}
			if elem != "." && elem != ".." && (strings.HasPrefix(elem, ".") || strings.HasPrefix(elem, "_")) || elem == "testdata" {
				return filepath.SkipDir
			}
			if ign.skips(path) {
				return filepath.SkipDir // its start included, as for the go command
			}
			if path != lp.walk {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			if lp.matches(path) {
				dirs = append(dirs, path)
			}
			if elem == "vendor" && path != lp.walk && !vendor {
				return filepath.SkipDir // no wildcard matches below it
			}
			return nil
		})
		if err != nil {
			return nil, false
		}
	}
	return dirs, true
}

// ignores are the ignore directives of a module's go.mod (Go 1.25), which
// take directories out of the go command's "..." patterns (a directory
// named without a wildcard is still a package). They are read as the go
// command reads them (cmd/go/internal/search.IgnorePatterns): "./x" ignores
// the tree x at the module's root, "x" every tree whose path in the module
// ends in x ("node_modules" anywhere); no wildcards.
type ignores struct {
	root     string   // the module's root, absolute
	rooted   []string // "./x" as "/x/"
	anywhere []string // "x" as "/x/"
}

// moduleIgnores returns the ignore directives of the module dir lies in
// (the first go.mod at or above it); nil when there are none, its go.mod
// does not parse (the go command then ignores nothing either), or modules
// are off.
func moduleIgnores(dir string) *ignores {
	if os.Getenv("GO111MODULE") == "off" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			f, err := modfile.Parse("go.mod", data, nil)
			if err != nil || len(f.Ignore) == 0 {
				return nil
			}
			ign := &ignores{root: d}
			for _, i := range f.Ignore {
				if p, ok := strings.CutPrefix(i.Path, "./"); ok {
					ign.rooted = append(ign.rooted, slashed(p))
				} else {
					ign.anywhere = append(ign.anywhere, slashed(p))
				}
			}
			return ign
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// skips reports whether the go command's walk of a "..." pattern leaves
// out the directory dir, and the tree below it.
func (ign *ignores) skips(dir string) bool {
	if ign == nil {
		return false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	r, err := filepath.Rel(ign.root, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return false // not in the module
	}
	r = slashed(r)
	for _, p := range ign.rooted {
		if strings.HasPrefix(r, p) {
			return true
		}
	}
	for _, p := range ign.anywhere {
		if strings.Contains(r, p) {
			return true
		}
	}
	return false
}

// slashed writes a relative path with slashes, one in front and one at
// the end, so that prefixes and substrings match whole elements.
func slashed(path string) string {
	path = filepath.ToSlash(path)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if !strings.HasSuffix(path, "/") {
		path += "/"
	}
	return path
}

// matchesAny reports whether pattern matched one of the listed packages
// (the go command only warns about a pattern that matched nothing): by
// directory for a local pattern, by import path for another.
func matchesAny(dir, pattern string, list []*packages.Package) bool {
	if isMeta(pattern) {
		return true
	}
	var match func(p *packages.Package) bool
	if isLocal(pattern) {
		base := dir
		if base == "" {
			base, _ = os.Getwd()
		}
		base, _ = filepath.Abs(base)
		lp := newLocalPattern(base, pattern)
		match = func(p *packages.Package) bool { return lp.matches(p.Dir) }
	} else {
		m := matchPattern(pattern)
		match = func(p *packages.Package) bool { return m(p.PkgPath) }
	}
	for _, p := range list {
		if len(p.Errors) > 0 && len(p.GoFiles) == 0 {
			continue
		}
		if match(p) {
			return true
		}
	}
	return false
}
