package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// behaviour maps contender and property to the value its test recorded.
type behaviour map[string]map[string]string

// runBehaviour runs the behaviour and allocation tests of package contend,
// which append one JSON record per cell to the file named by
// BENCH_BEHAVIOUR_OUT.
func runBehaviour(o options) (behaviour, error) {
	fmt.Fprintln(o.log, "behaviour tests")
	path := filepath.Join(o.raw, "behaviour.jsonl")
	os.Remove(path)
	cmd := exec.Command("go", "test", "-count", "1", "-run", "^Test(Behaviour|.*Allocates)", "./contend")
	cmd.Env = append(os.Environ(), "BENCH_BEHAVIOUR_OUT="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("behaviour tests: %v\n%s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := behaviour{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ Contender, Property, Value string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if b[r.Contender] == nil {
			b[r.Contender] = map[string]string{}
		}
		b[r.Contender][r.Property] = r.Value
	}
	return b, sc.Err()
}
