// Package testcluster runs a private MariaDB Galera cluster for tests: N nodes of the installed
// MariaDB server with the galera-4 provider, each a db/mysqld server on its own data dir and
// unix socket, replicating over loopback TCP ports. Node 1 bootstraps the cluster
// (--wsrep-new-cluster), the others join it by rsync state transfer.
//
// rsync state transfer starts an rsync daemon on the joiner; run as root, that daemon drops
// to the user nobody, so as root every node's data dir is handed to nobody before the node
// starts (the server itself keeps running as root).
package testcluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"runsdesk/db/mysqld"
)

// providerPaths are where the galera-4 packages of Debian/Ubuntu and RPM distributions
// install the wsrep provider library.
func providerPaths() []string {
	return []string{"/usr/lib/galera/libgalera_smm.so", "/usr/lib/libgalera_smm.so", "/usr/lib64/galera-4/libgalera_smm.so"}
}

// ErrNoGalera is returned by Start when the wsrep provider or rsync is not installed.
var ErrNoGalera = errors.New("galera: MariaDB Galera is not installed: install it (Debian/Ubuntu: apt-get install galera-4 rsync mariadb-server)")

// syncTimeout bounds the wait for a node to reach Synced after its server answers.
const syncTimeout = 3 * time.Minute

// joinAttempts bounds the starts of a new joiner: on a loaded machine a joiner's first state
// transfer can outlast the group's inactivity timeouts, and it then leaves the cluster and aborts.
const joinAttempts = 3

// Options configures Start.
type Options struct {
	// Dir holds the nodes' data dirs (node1, node2, …). Required; it is created if missing.
	Dir string
	// Nodes is the cluster size; 0 means 3.
	Nodes int
	// Logger receives start and stop events; nil means slog.Default().
	Logger *slog.Logger
}

// Cluster is a running Galera cluster. Its methods are safe for concurrent use.
type Cluster struct {
	dir      string
	provider string
	logger   *slog.Logger
	nodes    []*node
}

type node struct {
	mu      sync.Mutex
	index   int // 1-based
	dataDir string
	gcomm   int // group communication port
	ist     int // incremental state transfer port
	sst     int // rsync state transfer port
	server  *mysqld.Server
	socket  string
}

// Provider returns the path of the installed wsrep provider, or ErrNoGalera when it, rsync or
// the MariaDB server is missing.
func Provider(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("rsync"); err != nil {
		return "", fmt.Errorf("%w; rsync is not on PATH", ErrNoGalera)
	}
	if _, err := mysqld.Binary(ctx); err != nil {
		return "", fmt.Errorf("%w; %v", ErrNoGalera, err)
	}
	for _, p := range providerPaths() {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w; no wsrep provider at %s", ErrNoGalera, strings.Join(providerPaths(), ", "))
}

// Start starts an opts.Nodes-node cluster under opts.Dir and returns once every node reports
// wsrep_cluster_size = Nodes and wsrep_local_state_comment = Synced. On failure it stops what
// it started. Without the packages the error is ErrNoGalera.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("galera: Options.Dir is empty")
	}
	n := opts.Nodes
	if n == 0 {
		n = 3
	}
	provider, err := Provider(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("galera: dir %q: %w", opts.Dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("galera: create %s: %w", dir, err)
	}
	// The rsync daemon of a joiner (nobody, when run as root) walks down to the data dir.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("galera: chmod %s: %w", dir, err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	ports, err := freePorts(3 * n)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, provider: provider, logger: logger}
	for i := range n {
		c.nodes = append(c.nodes, &node{index: i + 1, dataDir: filepath.Join(dir, "node"+strconv.Itoa(i+1)),
			gcomm: ports[3*i], ist: ports[3*i+1], sst: ports[3*i+2]})
	}
	started := time.Now()
	for _, nd := range c.nodes {
		if err := c.startNew(ctx, nd); err != nil {
			_ = c.Stop(context.Background())
			return nil, err
		}
	}
	if err := c.WaitSynced(ctx); err != nil {
		_ = c.Stop(context.Background())
		return nil, err
	}
	logger.Info("galera: cluster synced", "nodes", n, "duration", time.Since(started).Round(time.Millisecond))
	return c, nil
}

// Size returns the number of nodes.
func (c *Cluster) Size() int { return len(c.nodes) }

// DSN returns a go-sql-driver/mysql DSN for database on node i (1-based) as root over its
// unix socket (parseTime, UTC), as mysqld.Server.DSN does.
func (c *Cluster) DSN(i int, database string) string {
	nd := c.nodes[i-1]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = nd.socket
	cfg.DBName = database
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	return cfg.FormatDSN()
}

// Kill ends node i's server with SIGKILL, as a crash would. The other nodes go on as a
// cluster of the rest.
func (c *Cluster) Kill(i int) error {
	nd := c.nodes[i-1]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.server == nil {
		return fmt.Errorf("galera: node %d is not running", i)
	}
	err := nd.server.Kill()
	nd.server = nil
	c.logger.Info("galera: node killed", "node", i)
	return err
}

// Restart starts node i again after Kill or StopNode: it recovers the node's last committed
// position from its data dir (mariadbd --wsrep-recover), so it rejoins by incremental state
// transfer when the others still hold the missed write sets (else by rsync), and returns once
// every node is synced.
func (c *Cluster) Restart(ctx context.Context, i int) error {
	nd := c.nodes[i-1]
	if err := c.startNode(ctx, nd, false); err != nil {
		return err
	}
	return c.WaitSynced(ctx)
}

// WaitSynced waits until every running node reports the full cluster size and Synced.
func (c *Cluster) WaitSynced(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for _, nd := range c.nodes {
		if err := c.waitNode(ctx, nd); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) waitNode(ctx context.Context, nd *node) error {
	dsn := c.DSN(nd.index, "")
	pool, err := sql.Open("mysql", dsn)
	if err != nil {
		return fmt.Errorf("galera: node %d: %w", nd.index, err)
	}
	defer pool.Close()
	var size, state string
	for {
		size, state, err = status(ctx, pool)
		if err == nil && size == strconv.Itoa(len(c.nodes)) && state == "Synced" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("galera: node %d not synced (cluster size %q, state %q, last error %v): %w; log %s",
				nd.index, size, state, err, ctx.Err(), filepath.Join(nd.dataDir, "mysqld.err"))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func status(ctx context.Context, pool *sql.DB) (size, state string, err error) {
	rows, err := pool.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_local_state_comment')`)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return "", "", err
		}
		switch name {
		case "wsrep_cluster_size":
			size = value
		case "wsrep_local_state_comment":
			state = value
		}
	}
	return size, state, rows.Err()
}

// Stop shuts every running node down, the last one to stop first, so node 1 stops last, and
// returns the joined errors.
func (c *Cluster) Stop(ctx context.Context) error {
	var errs []error
	for i := len(c.nodes) - 1; i >= 0; i-- {
		nd := c.nodes[i]
		nd.mu.Lock()
		if nd.server != nil {
			if err := nd.server.Stop(ctx); err != nil {
				errs = append(errs, fmt.Errorf("galera: stop node %d: %w", nd.index, err))
			}
			nd.server = nil
		}
		nd.mu.Unlock()
	}
	return errors.Join(errs...)
}

// startNew starts a node that holds no data yet. A joiner that aborts during start-up is
// started again on a fresh data dir, up to joinAttempts times; the failed dir is kept beside it
// (nodeN.failed-K) with its log.
func (c *Cluster) startNew(ctx context.Context, nd *node) error {
	bootstrap := nd.index == 1
	for attempt := 1; ; attempt++ {
		err := c.startNode(ctx, nd, bootstrap)
		if err == nil || bootstrap || attempt == joinAttempts || ctx.Err() != nil {
			return err
		}
		failed := nd.dataDir + ".failed-" + strconv.Itoa(attempt)
		c.logger.Warn("galera: a joiner aborted during start-up; starting it again on a fresh data dir",
			"node", nd.index, "attempt", attempt, "kept", failed, "err", err)
		if err := os.Rename(nd.dataDir, failed); err != nil {
			return fmt.Errorf("galera: node %d: keep the failed data dir: %w", nd.index, err)
		}
	}
}

func (c *Cluster) startNode(ctx context.Context, nd *node, bootstrap bool) error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.server != nil {
		return fmt.Errorf("galera: node %d is already running", nd.index)
	}
	args := c.nodeArgs(nd, bootstrap)
	if _, err := os.Stat(filepath.Join(nd.dataDir, "grastate.dat")); err == nil {
		pos, err := c.recoverPosition(ctx, nd)
		if err != nil {
			return err
		}
		if pos != "" {
			args = append(args, "--wsrep-start-position="+pos)
		}
	}
	if err := mysqld.Init(ctx, mysqld.Options{DataDir: nd.dataDir, Logger: c.logger}); err != nil {
		return fmt.Errorf("galera: node %d: %w", nd.index, err)
	}
	if err := handToRsync(nd.dataDir); err != nil {
		return err
	}
	srv, err := mysqld.Start(ctx, mysqld.Options{DataDir: nd.dataDir, Logger: c.logger, Args: args})
	if err != nil {
		return fmt.Errorf("galera: start node %d: %w", nd.index, err)
	}
	nd.server = srv
	nd.socket = srv.Socket()
	return nil
}

func (c *Cluster) nodeArgs(nd *node, bootstrap bool) []string {
	var peers []string
	for _, other := range c.nodes {
		peers = append(peers, "127.0.0.1:"+strconv.Itoa(other.gcomm))
	}
	address := "gcomm://" + strings.Join(peers, ",")
	if bootstrap {
		address = "gcomm://"
	}
	providerOptions := strings.Join([]string{
		"gmcast.listen_addr=tcp://127.0.0.1:" + strconv.Itoa(nd.gcomm),
		"ist.recv_addr=127.0.0.1:" + strconv.Itoa(nd.ist),
		"gcache.size=64M",
		// A killed node is noticed within seconds, not the default 5 to 15.
		"evs.keepalive_period=PT0.5S",
		"evs.inactive_check_period=PT0.5S",
		"evs.suspect_timeout=PT3S",
		"evs.inactive_timeout=PT5S",
		"evs.install_timeout=PT5S",
	}, ";")
	args := []string{
		"--wsrep-on=ON",
		"--wsrep-provider=" + c.provider,
		"--wsrep-cluster-name=runsdesk-test",
		"--wsrep-node-name=node" + strconv.Itoa(nd.index),
		"--wsrep-node-address=127.0.0.1:" + strconv.Itoa(nd.gcomm),
		"--binlog-format=ROW",
		"--innodb-autoinc-lock-mode=2",
		"--default-storage-engine=InnoDB",
		"--wsrep-cluster-address=" + address,
		"--wsrep-provider-options=" + providerOptions,
		"--wsrep-sst-method=rsync",
		"--wsrep-sst-receive-address=127.0.0.1:" + strconv.Itoa(nd.sst),
		"--innodb-flush-log-at-trx-commit=2",
		"--innodb-buffer-pool-size=64M",
		"--wsrep-slave-threads=2",
	}
	if bootstrap {
		args = append(args, "--wsrep-new-cluster")
	}
	return args
}

var recoveredPosition = regexp.MustCompile(`WSREP: Recovered position: ([0-9a-f-]{36}:-?[0-9]+)`)

// recoverPosition runs mariadbd --wsrep-recover on a stopped node's data dir and returns the
// last committed position it reports ("" when none), as mysqld_safe does before a restart.
func (c *Cluster) recoverPosition(ctx context.Context, nd *node) (string, error) {
	bin, err := mysqld.Binary(ctx)
	if err != nil {
		return "", err
	}
	logFile := filepath.Join(nd.dataDir, "wsrep-recover.err")
	_ = os.Remove(logFile)
	args := append([]string{"--no-defaults", "--datadir=" + nd.dataDir, "--log-error=" + logFile,
		"--tmpdir=" + nd.dataDir + ".tmp", "--skip-networking", "--socket=" + filepath.Join(nd.dataDir, "recover.sock"),
		"--wsrep-recover"}, c.nodeArgs(nd, false)...)
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	logText, _ := os.ReadFile(logFile)
	if err != nil {
		return "", fmt.Errorf("galera: node %d: %s --wsrep-recover: %w\n%s%s", nd.index, bin, err, out, logText)
	}
	m := recoveredPosition.FindSubmatch(logText)
	if m == nil || strings.HasPrefix(string(m[1]), "00000000-0000-0000-0000-000000000000") {
		return "", nil
	}
	return string(m[1]), nil
}

// handToRsync gives the data dir to the user an rsync daemon started as root runs as, so a
// state transfer can write into it; as another user it does nothing.
func handToRsync(dataDir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		return fmt.Errorf("galera: rsync state transfer as root needs the user nobody: %w", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	err = filepath.WalkDir(dataDir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
	if err != nil {
		return fmt.Errorf("galera: hand %s to nobody for rsync: %w", dataDir, err)
	}
	return nil
}

// freePorts returns n distinct loopback TCP ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("galera: find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
