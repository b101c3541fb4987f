package redistest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFreeClusterPort: a cluster node's bus listens 10000 above its port,
// so a port above 55535 (a fifth of the ports Linux hands out) cannot be one.
func TestFreeClusterPort(t *testing.T) {
	for range 300 {
		port, err := freeClusterPort()
		require.NoError(t, err)
		require.LessOrEqual(t, port+busOffset, 65535)
		require.Positive(t, port)
	}
}
