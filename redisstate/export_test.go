package redisstate

import "time"

// WithFreshFor sets how soon after this process's own last heartbeat a
// trip message is taken at its word (freshFor): 0 reads every message's
// note, for the tests of late messages.
func WithFreshFor(d time.Duration) Option { return func(o *options) { o.freshFor = d } }

// HeardBeatSince reports whether the subscription has delivered a
// heartbeat sent after t.
func (f *Fleet) HeardBeatSince(t time.Time) bool {
	return time.Duration(f.sent.Load()) > t.Sub(f.born)
}

// WithNoteRead sets how long a trip message waits for its note's time
// left (noteRead), for a test whose reads go through a loaded proxy.
func WithNoteRead(d time.Duration) Option { return func(o *options) { o.noteRead = d } }

// Waiting is how many messages wait in the inbox for the applier.
func (f *Fleet) Waiting() int {
	f.inMu.Lock()
	defer f.inMu.Unlock()
	return len(f.inbox)
}
