package demo

import (
	"bytes"
	"log/slog"
	"sync"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// lockedBuffer is the scenario's output as the test reads it: the
// state-change hook writes from whichever goroutine made the transition
// (a timer's among them), so reads take the same lock as writes.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
