package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/examples/marketdata/fakeupstream"
	"github.com/breakergen/breakergen/redisstate/redistest"
)

// Settings of the scene.
const (
	processes = 3
	banFor    = 2 * time.Second // the ban's Retry-After: the OPEN period
	deadline  = 30 * time.Second
)

// line is a line a service printed.
type line struct {
	svc  string
	text string
	at   time.Time
}

// run is the coordinator: it sets the scene, reads what the services
// print, and tells the story.
func run(ctx context.Context, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	redis, err := redistest.Start(ctx)
	if errors.Is(err, redistest.ErrNotInstalled) {
		fmt.Fprintln(stdout, "fleet demo skipped: redis-server not installed (apt-get install redis-server)")
		return nil
	}
	if err != nil {
		return err
	}
	defer redis.Stop()
	redisAddr := redis.Addr

	up := fakeupstream.New()
	base, err := up.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer up.Close()
	lines, stopServices, err := startServices(ctx, redisAddr, base, stderr)
	if err != nil {
		return err
	}
	defer stopServices()
	next := func(keep func(line) bool) (line, error) {
		for {
			select {
			case l := <-lines:
				if keep(l) {
					return l, nil
				}
			case <-ctx.Done():
				return line{}, fmt.Errorf("the fleet did not finish its story within %s", deadline)
			}
		}
	}
	for range processes {
		if _, err := next(func(l line) bool { return strings.HasPrefix(l.text, "ready") }); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "fleet: %d processes of the service share their breakers through redis-server on %s\n",
		processes, redisAddr)

	// The ban: one process trips, the others follow.
	fmt.Fprintf(stdout, "\nupstream: tencent bans us (HTTP 403, Retry-After %s)\n", banFor)
	up.Set(marketdata.Tencent, fakeupstream.Behavior{Status: http.StatusForbidden, RetryAfter: banFor})
	var tripped, followed []string
	var first time.Time
	for len(tripped)+len(followed) < processes {
		l, err := next(isEvent("CLOSED", "OPEN"))
		if err != nil {
			return err
		}
		reason := eventReason(l)
		if strings.HasPrefix(reason, "peer ") {
			followed = append(followed, l.svc)
			fmt.Fprintf(stdout, "  %s followed %s later: %s\n", l.svc, l.at.Sub(first).Round(100*time.Microsecond), reason)
			continue
		}
		tripped = append(tripped, l.svc)
		first = l.at
		fmt.Fprintf(stdout, "  %s tripped: %s\n", l.svc, reason)
	}
	during := up.Requests(marketdata.Tencent)

	// The window ends: one probe for the fleet, and its success closes all.
	fmt.Fprintln(stdout, "\nupstream: tencent lifts the ban")
	up.Healthy(marketdata.Tencent)
	var probers, closed []string
	probeRequests := int64(-1)
	for len(closed) < processes {
		l, err := next(func(l line) bool { return isEvent("OPEN", "HALF_OPEN")(l) || isEvent("", "CLOSED")(l) })
		if err != nil {
			return err
		}
		if isEvent("OPEN", "HALF_OPEN")(l) {
			probers = append(probers, l.svc)
			fmt.Fprintf(stdout, "  %s won the probe lease and probes\n", l.svc)
			continue
		}
		if probeRequests < 0 {
			probeRequests = up.Requests(marketdata.Tencent) - during
		}
		closed = append(closed, l.svc)
		fmt.Fprintf(stdout, "  %s closed: %s\n", l.svc, eventReason(l))
	}

	fmt.Fprintf(stdout, "\nsummary: %d process tripped (%s), %d followed (%s); %d probe went out for the fleet (%s), "+
		"%d request reached tencent for it; %d of %d processes closed\n",
		len(tripped), strings.Join(tripped, ", "), len(followed), strings.Join(followed, ", "),
		len(probers), strings.Join(probers, ", "), probeRequests, len(closed), processes)
	if len(tripped) != 1 || len(followed) != processes-1 || len(probers) != 1 || probeRequests != 1 {
		return errors.New("the fleet did not behave: want one trip, the others following, exactly one probe")
	}
	return nil
}

// isEvent matches a service's transition line from state from (any when
// "") to state to.
func isEvent(from, to string) func(line) bool {
	return func(l line) bool {
		f := strings.Fields(l.text)
		return len(f) >= 4 && f[0] == "event" && (from == "" || f[2] == from) && f[3] == to
	}
}

// eventReason is the reason of a transition line.
func eventReason(l line) string {
	f := strings.SplitN(l.text, " ", 5)
	if len(f) < 5 {
		return ""
	}
	return f[4]
}

// startServices starts the service processes (this binary again) and
// returns what they print, line by line.
func startServices(ctx context.Context, redisAddr, upstream string, stderr io.Writer) (<-chan line, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	lines := make(chan line, 256)
	stderr = &lockedWriter{w: stderr} // three processes write to it
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
	}
	for i := range processes {
		name := "svc-" + strconv.Itoa(i)
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = append(os.Environ(), serviceEnv+"="+name, redisEnv+"="+redisAddr, upstreamEnv+"="+upstream)
		cmd.Stderr = stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			stopAll()
			return nil, nil, err
		}
		stops = append(stops, func() {
			_ = stdin.Close() // the service's signal to end
			_ = cmd.Wait()
		})
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- line{svc: name, text: sc.Text(), at: time.Now()}
			}
		}()
	}
	return lines, stopAll, nil
}

// lockedWriter serialises the writes of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
