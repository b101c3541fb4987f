// Package write puts a run's outputs on disk: it writes only the files
// whose bytes changed and removes our outputs that no source needs any more.
package write

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/load"
)

// Change is one file a run writes or removes.
type Change struct {
	Path   string
	Remove bool
	Data   []byte
}

// Plan compares the rendered outputs with the disk. existing are our
// outputs found on disk; sources are the source files the run scanned; an
// existing output is removed when its source was scanned and produced
// nothing, or when its source is gone. With keep set (a -type run), no
// output is removed but those of an old name, which move (see below).
//
// An output on disk that differs from its rendering only in "\r\n" line
// endings (git's core.autocrlf checks text files out that way on Windows,
// and normalises them again on commit) is up to date: no change, so that
// -check passes on such a checkout.
//
// blocked are the outputs, sorted, whose path holds a file that breakergen
// did not write, which is never overwritten: they are in no change, and a
// run that has any must write nothing (no partial output), while a -check
// run still reports the changes with them.
func Plan(outputs map[string][]byte, existing, sources map[string]bool, keep bool) (changes []Change, blocked []string, err error) {
	for path, data := range outputs {
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if err == nil && sameText(old, data) {
			continue
		}
		if err == nil && !load.IsOutput(old) {
			blocked = append(blocked, path)
			continue
		}
		changes = append(changes, Change{Path: path, Data: data})
	}
	slices.Sort(blocked)
	// An output named as before the names kept their source's platform
	// (f_windows_breaker.go, which built on every platform) moves to its
	// name now (f_breaker_windows.go), whatever the run: the run may not
	// load its source (another platform's), and the old name breaks every
	// other platform's build. Where this run wrote the new name, the old
	// file only goes.
	moved := map[string]bool{}
	for path := range existing {
		src := load.SourceOf(path)
		to := load.OutputOf(src)
		if src == "" || to == path {
			continue
		}
		moved[path] = true
		changes = append(changes, Change{Path: path, Remove: true})
		if _, ok := outputs[to]; ok || exists(to) || !sources[src] && !exists(src) {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		changes = append(changes, Change{Path: to, Data: data})
	}
	if !keep {
		for path := range existing {
			if _, ok := outputs[path]; ok || moved[path] {
				continue
			}
			src := load.SourceOf(path)
			if sources[src] || !exists(src) {
				changes = append(changes, Change{Path: path, Remove: true})
			}
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return changes, blocked, nil
}

// sameText reports whether old holds data, byte for byte or with "\r\n"
// in place of its line endings.
func sameText(old, data []byte) bool {
	return bytes.Equal(old, data) || bytes.Contains(old, []byte("\r\n")) && bytes.Equal(lf(old), data)
}

// lf returns data with each "\r\n" made "\n".
func lf(data []byte) []byte {
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Apply makes the changes.
func Apply(changes []Change) error {
	for _, c := range changes {
		if c.Remove {
			if err := os.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := writeFile(c.Path, c.Data); err != nil {
			return err
		}
	}
	return nil
}

// writeFile replaces path atomically, so a reader never sees half a file.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".breakergen-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// emptiedNote is what an emptied output says, between its header and its
// package clause.
const emptiedNote = `// Nothing is annotated for this file any more. go generate was running
// breakergen, and go generate fails on a file of the package that
// disappears while it runs, so breakergen emptied this file rather than
// remove it. Delete it, or run breakergen outside go generate (go tool
// breakergen), which removes it.
`

// Emptied returns what the output old (one of ours) becomes when it must
// go while go generate runs: our header, a note, its //go:build line if it
// has one (so that the package builds on the platforms it did), and its
// package clause; false when old has no package clause. Old's line
// endings may be "\r\n"; the result's are "\n".
func Emptied(old []byte) ([]byte, bool) {
	build := ""
	for line := range strings.Lines(string(lf(old))) {
		switch {
		case strings.HasPrefix(line, "//go:build ") && build == "":
			build = strings.TrimRight(line, "\n") + "\n\n"
		case strings.HasPrefix(line, "package "):
			return []byte(load.Header + "\n\n" + emptiedNote + "\n" + build + strings.TrimRight(line, "\n") + "\n"), true
		}
	}
	return nil, false
}

// IsEmptied reports whether data is an output Emptied made (with "\n"
// or "\r\n" line endings).
func IsEmptied(data []byte) bool {
	e, ok := Emptied(data)
	return ok && sameText(data, e)
}

// UnderGenerate adjusts changes for a run under go generate (generate): an
// output to remove is emptied instead (go generate ./... lists the files of
// every package before it runs a generator, so this holds for every
// directory, not only the one whose line runs breakergen), and one that is
// emptied already stays. A -check run (check) keeps emptied outputs too,
// so that it passes after go generate. It returns the changes left and the
// outputs it emptied.
func UnderGenerate(changes []Change, generate, check bool) (left []Change, emptied []string) {
	for _, c := range changes {
		if !c.Remove {
			left = append(left, c)
			continue
		}
		old, err := os.ReadFile(c.Path)
		switch {
		case err == nil && IsEmptied(old) && (generate || check):
			continue // stays as it is
		case err == nil && generate:
			if data, ok := Emptied(old); ok {
				left = append(left, Change{Path: c.Path, Data: data})
				emptied = append(emptied, c.Path)
				continue
			}
		}
		left = append(left, c)
	}
	return left, emptied
}
