package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// runTripQuality measures the trip-quality tables (package tripquality,
// its Full parameters) and returns them as Markdown.
func runTripQuality(o options) (string, error) {
	fmt.Fprintln(o.log, "trip quality")
	path := filepath.Join(o.raw, "tripquality.md")
	os.Remove(path)
	cmd := exec.Command("go", "test", "-count", "1", "-run", "^TestTripQuality$", "./tripquality", "-full", "-out", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("trip quality: %v\n%s", err, out)
	}
	md, err := os.ReadFile(path)
	return string(md), err
}

// tripQualitySection is the trip-quality tables under their heading.
func (r report) tripQualitySection(p func(string, ...any)) {
	if r.tripQuality == "" {
		return
	}
	p("## Trip quality\n\n")
	p("How well each breaker tells an outage from background failures (SPEC §8): `bench/tripquality`, measured in this run ")
	p("(`cd bench/tripquality && go test -run TestTripQuality -full -table` prints the same tables).\n\n")
	p("%s\n", r.tripQuality)
}
