package readme_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/readme"
	"github.com/breakergen/breakergen/runtime"
)

// TestREADMEChain runs the README's fallback chain: live, then the backup
// when the primary fails, and a ChainError when both do.
func TestREADMEChain(t *testing.T) {
	reg := runtime.NewRegistry(runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithoutEnv())
	primary := readme.NewHTTPQuoteSource("https://primary.example")
	backup := readme.NewHTTPQuoteSource("https://backup.example")
	quotes := readme.NewQuotes(primary, backup, reg)
	ctx := context.Background()

	q, from, err := readme.QuoteFrom(ctx, quotes, "600519")
	require.NoError(t, err)
	assert.Equal(t, 1688.0, q.Price)
	assert.Equal(t, "live", from)

	down := errors.New("HTTP 502")
	primary.Errs["600519"] = down
	_, from, err = readme.QuoteFrom(ctx, quotes, "600519")
	require.NoError(t, err)
	assert.Equal(t, "fallback:sina (eastmoney error)", from)

	backup.Errs["600519"] = down
	_, _, err = readme.QuoteFrom(ctx, quotes, "600519")
	var ce *runtime.ChainError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, down)
	assert.Len(t, ce.Sources, 2)
}
