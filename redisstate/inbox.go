package redisstate

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// The subscriber only receives: what it hears on the fleet's channel goes,
// in the order heard, to the inbox, and the applier acts on it, a batch
// at a time. The trip messages of a batch whose notes must be read (see
// noteLeft) are read together, in one round trip for up to noteBatch of
// them: during an outage, when many breakers trip at once across the
// fleet, a process behind a Redis 40 ms away (or on a Redis Cluster,
// where every message is read) follows 200 trips in a round trip or two,
// where reading them one at a time held every message after them for
// 200 round trips. Meanwhile the subscriber keeps draining the
// connection, and records each heartbeat as it comes, so that whether a
// message was current is judged when it was delivered.
const (
	noteBatch = 512   // notes read in one round trip at most
	inboxCap  = 65536 // messages waiting at most (see enqueue)
)

// delivered is what the subscriber hands the applier: a message on the
// fleet's channel, or a resync.
type delivered struct {
	payload string
	at      time.Time // when the subscriber heard it (both clocks)
	current bool      // delivered within freshFor of this process's own heartbeat (see noteLeft)
	resync  bool      // the subscription was made: read every note and mode
}

// waited is how long d has waited for the applier, on the longer of the
// two clocks (the wall clock counts a host's suspend).
func (d delivered) waited() time.Duration {
	now := time.Now()
	return max(now.Sub(d.at), now.Round(0).Sub(d.at.Round(0)))
}

// enqueue hands d to the applier. Past inboxCap waiting (an applier that
// cannot keep up, which a Redis that answers cannot cause), the waiting
// messages are dropped for one resync, which reads what they were about
// from the notes and modes; what it cannot read back (a probe's success
// closing a breaker) the breakers find out on their own when their
// windows end.
func (f *Fleet) enqueue(d delivered) {
	f.inMu.Lock()
	if len(f.inbox) >= inboxCap {
		f.opt.logger.Warn("redisstate: too many messages waiting; dropped them and reading the notes instead",
			"origin", f.opt.origin, "dropped", len(f.inbox))
		clear(f.inbox)
		f.inbox = append(f.inbox[:0], delivered{resync: true})
	}
	f.inbox = append(f.inbox, d)
	f.inMu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// applier acts on what the subscriber delivered, in the order delivered.
func (f *Fleet) applier() {
	defer f.wg.Done()
	var batch []delivered
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		}
		for {
			f.inMu.Lock()
			batch, f.inbox = f.inbox, batch[:0]
			f.inMu.Unlock()
			if len(batch) == 0 {
				break
			}
			f.applyAll(batch)
			clear(batch)
		}
	}
}

// applyAll acts on batch in order until Close. A message that needs no
// read is applied without waiting for the reads of those behind it; at
// the first one that does, the notes of it and of the next ones that do
// (noteBatch in all) are read together.
func (f *Fleet) applyAll(batch []delivered) {
	ms := make([]message, len(batch))
	errs := make([]error, len(batch))
	var reads []int // the trip messages whose notes are read, in order
	for i, d := range batch {
		if d.resync {
			continue
		}
		ms[i], errs[i] = parseMessage(d.payload)
		if errs[i] == nil && f.needsRead(ms[i], d.current) {
			reads = append(reads, i)
		}
	}
	left := make([]noteLeftRead, len(batch))
	for i, d := range batch {
		if f.ctx.Err() != nil {
			return // closing: the fleet applies no more news
		}
		if len(reads) > 0 && reads[0] == i {
			n := min(len(reads), noteBatch)
			f.readNotes(ms, reads[:n], left)
			reads = reads[n:]
		}
		switch {
		case d.resync:
			f.resync()
		case errs[i] != nil:
			f.ignore(errs[i], "payload", cut(d.payload))
		default:
			f.apply(ms[i], d, left[i])
		}
	}
}

// needsRead reports whether trip message m, delivered when current said,
// is to be checked against its note (see noteLeft): a peer's trip of a
// breaker or of a family's key that is not known to be current.
func (f *Fleet) needsRead(m message, current bool) bool {
	if m.Kind != kindOpen || m.Origin == f.opt.origin || current {
		return false
	}
	if _, ok := f.reg.Lookup(m.Name); ok {
		return true
	}
	fam, _ := f.reg.FamilyOf(m.Name)
	return fam != nil
}

// noteLeftRead is what the read of a note's time left found.
type noteLeftRead struct {
	left time.Duration // PTTL's answer: -2 no note, -1 no expiry
	at   time.Time     // when the answer came
	err  error
}

// readNotes reads the time left of the notes of ms[i] for each i of
// reads, in one round trip that waits noteRead at most (or the fleet's
// timeout, if shorter), into out[i]. A read that fails does not count
// Redis as away (see noteLeft), nor does it leave the other reads
// unanswered: a Cluster node failing over fails its own commands alone.
func (f *Fleet) readNotes(ms []message, reads []int, out []noteLeftRead) {
	cmds := make([]*redis.DurationCmd, len(reads))
	err := f.boundedFor(f.ctx, min(f.opt.timeout, f.opt.noteRead), func(ctx context.Context) error {
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j, i := range reads {
				cmds[j] = p.PTTL(ctx, f.noteKey(ms[i].Name))
			}
			return nil
		})
		return err
	})
	at := time.Now()
	// Each command's own answer, when the round trip ended (else it may
	// still be under way, writing cmds) and failed, if it did, in some
	// commands (one Cluster node's) rather than as a whole (a command
	// that no error names was answered then).
	each := err == nil || !errors.Is(err, errTimeout) && slices.ContainsFunc(cmds, func(c *redis.DurationCmd) bool { return c != nil && c.Err() != nil })
	for j, i := range reads {
		r := noteLeftRead{at: at, err: err}
		if each && cmds[j] != nil {
			r.left, r.err = cmds[j].Result()
		}
		out[i] = r
	}
}
