package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs this test binary as a service process when the
// coordinator starts it so.
func TestMain(m *testing.M) {
	if name := os.Getenv(serviceEnv); name != "" {
		if err := service(context.Background(), name, os.Getenv(redisEnv), os.Getenv(upstreamEnv), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a redis-server and three processes (about 3s)")
	}
	var out, errs bytes.Buffer
	require.NoError(t, run(context.Background(), &out, &errs), "stdout:\n%s\nstderr:\n%s", out.String(), errs.String())
	t.Log(out.String())
	if bytes.Contains(out.Bytes(), []byte("skipped")) {
		t.Skip("missing component: redis-server (apt-get install redis-server); the demo said: " + out.String())
	}
	assert.Contains(t, out.String(), "1 process tripped")
	assert.Contains(t, out.String(), "2 followed")
	assert.Contains(t, out.String(), "1 probe went out for the fleet")
	assert.Contains(t, out.String(), "3 of 3 processes closed")
}
