package annotation

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/breakergen/breakergen/internal/setting"
	"github.com/breakergen/breakergen/runtime"
)

// TestMaxWindowCallsIsTheRuntimes: the largest count window an annotation
// may give is the largest the runtime keeps, which Registry.Update checks.
func TestMaxWindowCallsIsTheRuntimes(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	reg.Breaker(runtime.Config{Name: "w", WindowCalls: 100})
	assert.NoError(t, reg.Update(runtime.Config{Name: "w", WindowCalls: setting.MaxWindowCalls}))
	assert.Error(t, reg.Update(runtime.Config{Name: "w", WindowCalls: setting.MaxWindowCalls + 1}))
}
