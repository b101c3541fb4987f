package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machine says where the numbers were taken.
type machine struct {
	cpus    int    // online CPUs (nproc)
	model   string // /proc/cpuinfo's "model name"
	goVer   string // go version
	osArch  string
	loadavg string // /proc/loadavg when the run started
	loadEnd string // and when it ended
}

func describeMachine() (machine, error) {
	m := machine{cpus: runtime.NumCPU(), osArch: runtime.GOOS + "/" + runtime.GOARCH, model: "unknown"}
	if out, err := exec.Command("nproc").Output(); err == nil {
		fmt.Sscan(string(out), &m.cpus)
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	m.loadavg = loadavg()
	out, err := exec.Command("go", "version").Output()
	if err != nil {
		return m, fmt.Errorf("go version: %w", err)
	}
	m.goVer = strings.TrimPrefix(string(bytes.TrimSpace(out)), "go version ")
	return m, nil
}

// loadavg returns the 1, 5 and 15 minute load averages, or "" where there
// are none.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
