package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// notInstalled is [ErrNotInstalled] for another of the tools: redis-cli,
// redis-sentinel.
type notInstalled struct{ bin, pkg string }

func (e notInstalled) Error() string {
	return fmt.Sprintf("redistest: %s not installed (apt-get install %s)", e.bin, e.pkg)
}

func (e notInstalled) Is(target error) bool { return target == ErrNotInstalled }

// poll is how often the wait for a cluster or a failover set asks again.
const poll = 20 * time.Millisecond

// withArgs adds arguments to a redis-server's command line.
func withArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// Cluster is a running Redis Cluster of three masters, each a
// redis-server on a free loopback port with persistence off, and with
// [WithReplicas] a replica of each.
type Cluster struct {
	// Addrs are the masters' host:port as started: the first serves
	// slots 0-5460, the second 5461-10922, the third 10923-16383.
	Addrs []string
	// Nodes are the masters as started, in the order of Addrs.
	Nodes []*Server
	// Replicas are the replicas of [WithReplicas], nil without: after a
	// master fails, its replica serves its slots.
	Replicas []*Server

	dir string // the nodes' cluster-config files
}

// ClusterOption sets up a cluster before [StartCluster] runs it.
type ClusterOption func(*clusterConfig)

type clusterConfig struct {
	replicas bool
}

// WithReplicas gives each master a replica, which takes over its slots
// when it fails, and has the nodes count a node failed after a second of
// silence (cluster-node-timeout; 5 s without), so that a test's failover
// takes about two seconds.
func WithReplicas() ClusterOption { return func(c *clusterConfig) { c.replicas = true } }

// StartCluster starts three redis-server --cluster-enabled yes (six with
// [WithReplicas]), joins them with redis-cli --cluster create, and
// returns once every node says cluster_state:ok (and every replica is in
// sync with its master). ctx bounds only the start. It returns an error
// matching [ErrNotInstalled] without redis-server or redis-cli.
func StartCluster(ctx context.Context, opts ...ClusterOption) (*Cluster, error) {
	var cc clusterConfig
	for _, o := range opts {
		o(&cc)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNotInstalled
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, notInstalled{"redis-cli", "redis-tools"}
	}
	dir, err := os.MkdirTemp("", "redistest-cluster-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	c := &Cluster{dir: dir}
	nodes, timeout, replicas := 3, "5000", "0"
	if cc.replicas {
		nodes, timeout, replicas = 6, "1000", "1"
	}
	var addrs []string
	for i := range nodes {
		port, err := freeClusterPort()
		if err != nil {
			c.Stop()
			return nil, err
		}
		s, err := Start(ctx, WithPort(port), withArgs("--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf"),
			// A replica may take over however long it has been away from
			// its master (validity factor 0): a loaded machine's stall
			// must not leave a slot without a master.
			"--cluster-node-timeout", timeout, "--cluster-replica-validity-factor", "0", "--dir", dir))
		if err != nil {
			c.Stop()
			return nil, err
		}
		if i < 3 {
			c.Nodes = append(c.Nodes, s)
			c.Addrs = append(c.Addrs, s.Addr)
		} else {
			c.Replicas = append(c.Replicas, s)
		}
		addrs = append(addrs, s.Addr)
	}
	// go-redis appends the nodes it finds to ClusterOptions.Addrs in
	// place when it reloads the slot map: with room left, two clients made
	// from Addrs would write one array.
	c.Addrs = slices.Clip(c.Addrs)
	// redis-cli makes masters of the first three nodes, all on one host.
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", replicas, "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %w: %s", err, out)
	}
	known := "cluster_known_nodes:" + strconv.Itoa(nodes)
	for _, addr := range addrs {
		err := waitFor(ctx, addr, "cluster_state:ok", func(ctx context.Context, rdb *redis.Client) (bool, error) {
			info, err := rdb.ClusterInfo(ctx).Result()
			return strings.Contains(info, "cluster_state:ok") && strings.Contains(info, known), err
		})
		if err != nil {
			c.Stop()
			return nil, err
		}
	}
	for _, s := range c.Replicas {
		err := waitFor(ctx, s.Addr, "link to the master", func(ctx context.Context, rdb *redis.Client) (bool, error) {
			info, err := rdb.Info(ctx, "replication").Result()
			return strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up"), err
		})
		if err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// busOffset is how far above its port a cluster node listens for the
// cluster bus.
const busOffset = 10000

// freeClusterPort is a free loopback port whose cluster bus port is free
// too, and so at most 65535-busOffset (a free port of the kernel's range,
// up to 60999 on Linux, often is not: the node then exits at start).
func freeClusterPort() (int, error) {
	for range 100 {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if port+busOffset > 65535 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+busOffset)))
		if err != nil {
			continue // the bus port is taken
		}
		if err := l.Close(); err != nil {
			return 0, fmt.Errorf("redistest: finding a free port: %w", err)
		}
		return port, nil
	}
	return 0, errors.New("redistest: no free port with a free cluster bus port")
}

// Stop kills the nodes and removes their files. Stopping again does
// nothing.
func (c *Cluster) Stop() {
	for _, s := range slices.Concat(c.Nodes, c.Replicas) {
		s.Stop()
	}
	_ = os.RemoveAll(c.dir)
}

// waitFor asks the server at addr until ok says yes, or ctx ends.
func waitFor(ctx context.Context, addr, what string, ok func(context.Context, *redis.Client) (bool, error)) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	t := time.NewTicker(poll)
	defer t.Stop()
	var last error
	for {
		yes, err := ok(ctx, rdb)
		if yes && err == nil {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: %s: no %s (last error: %v): %w", addr, what, last, ctx.Err())
		case <-t.C:
		}
	}
}

// Sentinel timings of [StartFailover]: short, so that a test's failover
// takes seconds.
const (
	DownAfter       = 300 * time.Millisecond // down-after-milliseconds
	FailoverTimeout = time.Second            // failover-timeout
)

// Failover is a master, its replica and three sentinels that watch them
// (quorum 2), all on free loopback ports with persistence off.
type Failover struct {
	// MasterName is the name the sentinels know the master by.
	MasterName string
	// Master and Replica are the servers as started; after a failover
	// the replica is the master.
	Master, Replica *Server
	// SentinelAddrs are the sentinels' host:port.
	SentinelAddrs []string
	// Sentinels are the sentinels' processes.
	Sentinels []*Server

	dir string // the sentinels' config files, which they rewrite
}

// StartFailover starts a master, a replica of it, and three sentinels,
// and returns once each sentinel knows the replica and the two other
// sentinels, so that killing the master promotes the replica (after
// [DownAfter] and an election). ctx bounds only the start. It returns an
// error matching [ErrNotInstalled] without redis-server or
// redis-sentinel.
func StartFailover(ctx context.Context) (*Failover, error) {
	sentinel, err := exec.LookPath("redis-sentinel")
	if err != nil {
		return nil, notInstalled{"redis-sentinel", "redis-sentinel"}
	}
	dir, err := os.MkdirTemp("", "redistest-sentinel-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	f := &Failover{MasterName: "redistest", dir: dir}
	// The replica keeps the copy it syncs from in memory (diskless load),
	// and anything a server would write goes to dir, not the test's.
	disk := withArgs("--dir", dir, "--repl-diskless-sync", "yes", "--repl-diskless-load", "on-empty-db")
	if f.Master, err = Start(ctx, disk); err != nil {
		f.Stop()
		return nil, err
	}
	if f.Replica, err = Start(ctx, disk, withArgs("--replicaof", "127.0.0.1", strconv.Itoa(f.Master.Port))); err != nil {
		f.Stop()
		return nil, err
	}
	err = waitFor(ctx, f.Replica.Addr, "link to the master", func(ctx context.Context, rdb *redis.Client) (bool, error) {
		info, err := rdb.Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up"), err
	})
	if err != nil {
		f.Stop()
		return nil, err
	}
	for range 3 {
		port, err := freePort()
		if err != nil {
			f.Stop()
			return nil, err
		}
		conf := filepath.Join(dir, "sentinel-"+strconv.Itoa(port)+".conf")
		text := fmt.Sprintf(`port %d
bind 127.0.0.1
daemonize no
logfile ""
dir %s
sentinel monitor %s 127.0.0.1 %d 2
sentinel down-after-milliseconds %[3]s %[5]d
sentinel failover-timeout %[3]s %[6]d
sentinel parallel-syncs %[3]s 1
`, port, dir, f.MasterName, f.Master.Port, DownAfter.Milliseconds(), FailoverTimeout.Milliseconds())
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			f.Stop()
			return nil, fmt.Errorf("redistest: %w", err)
		}
		s, err := run(ctx, sentinel, []string{conf}, port, "+monitor master")
		if err != nil {
			f.Stop()
			return nil, err
		}
		f.Sentinels = append(f.Sentinels, s)
		f.SentinelAddrs = append(f.SentinelAddrs, s.Addr)
	}
	for _, addr := range f.SentinelAddrs {
		err := waitFor(ctx, addr, "replica and peers", func(ctx context.Context, rdb *redis.Client) (bool, error) {
			sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer sc.Close()
			m, err := sc.Master(ctx, f.MasterName).Result()
			return m["num-slaves"] == "1" && m["num-other-sentinels"] == "2", err
		})
		if err != nil {
			f.Stop()
			return nil, err
		}
	}
	return f, nil
}

// MasterAddr is the master's host:port as the first sentinel that answers
// says.
func (f *Failover) MasterAddr(ctx context.Context) (string, error) {
	var errs []error
	for _, addr := range f.SentinelAddrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
		hp, err := sc.GetMasterAddrByName(ctx, f.MasterName).Result()
		_ = sc.Close()
		if err == nil && len(hp) == 2 {
			return net.JoinHostPort(hp[0], hp[1]), nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("redistest: no sentinel knows the master: %w", errors.Join(errs...))
}

// Stop kills the sentinels and the servers and removes the sentinels'
// files. Stopping again does nothing.
func (f *Failover) Stop() {
	for _, s := range f.Sentinels {
		s.Stop()
	}
	for _, s := range []*Server{f.Master, f.Replica} {
		if s != nil {
			s.Stop()
		}
	}
	_ = os.RemoveAll(f.dir)
}
