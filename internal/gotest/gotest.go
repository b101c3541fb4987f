// Package gotest gives tests that run the go command in a scratch module
// (testscript's scripts) the go environment of the machine they run on.
package gotest

import (
	"encoding/json"
	"fmt"
	"os/exec"
)

// Keys are the go environment variables a scratch module needs to reach
// the same module cache, build cache, proxy, checksum database and
// toolchain as the go command that runs the test: testscript gives a
// script a HOME of its own, where the go env file (GOENV) of the machine
// is not read, so values set there by `go env -w` (a proxy, GOFLAGS)
// would be lost.
var Keys = []string{
	"GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS", "GOPROXY", "GONOPROXY",
	"GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOINSECURE", "GOTOOLCHAIN",
}

// Env returns the values of Keys as the go command sees them (environment
// first, then the go env file, then the defaults), leaving out the empty
// ones.
func Env() (map[string]string, error) {
	out, err := exec.Command("go", append([]string{"env", "-json"}, Keys...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	var all map[string]string
	if err := json.Unmarshal(out, &all); err != nil {
		return nil, fmt.Errorf("go env -json: %w", err)
	}
	env := map[string]string{}
	for k, v := range all {
		if v != "" {
			env[k] = v
		}
	}
	return env, nil
}
