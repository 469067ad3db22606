// Package mysqld runs a private MariaDB or MySQL server for one data
// directory: no network listener, a unix socket, root without a password.
// It is the database behind `make run` and the tests when no DSN is given.
//
// Besides DataDir it uses two siblings: DataDir.lock, which serialises
// Start, and DataDir.tmp, the server's tmpdir (a tmpdir shared by several
// servers makes their temporary table names collide).
//
// The socket is DataDir/mysqld.sock. A unix socket path is limited to 107
// bytes on Linux and 103 on macOS; when DataDir/mysqld.sock is longer than
// 103 bytes, the socket goes to os.TempDir()/runsdesk-mysqld-<hash>.sock
// instead, where <hash> is derived from the absolute data dir, so every
// process using the same data dir finds the same socket.
package mysqld

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

const (
	socketName = "mysqld.sock"
	pidName    = "mysqld.pid"
	logName    = "mysqld.err"

	// maxSocketPath is the longest socket path that works on both Linux
	// (108-byte sun_path) and macOS (104 bytes), NUL excluded.
	maxSocketPath = 103

	startTimeout = 2 * time.Minute
	stopTimeout  = time.Minute
)

// Options configures Start.
type Options struct {
	// DataDir holds the server's data, pid file, error log and (usually)
	// socket. It is created and initialised on first use. Required.
	DataDir string
	// Logger receives start and stop events, and reuse at debug level (every command on a
	// running private server reuses it); nil means slog.Default().
	Logger *slog.Logger
	// LookPath finds an executable by name. Nil means exec.LookPath and then
	// /usr/sbin and /usr/libexec. Tests set it to simulate a machine without
	// a server installed.
	LookPath func(name string) (string, error)
	// Args are extra server options, appended after Start's own (a later option wins), e.g.
	// the wsrep settings of a Galera node.
	Args []string
}

// Server is a running MariaDB/MySQL server reachable over a unix socket as
// root without a password. Its methods are safe for concurrent use.
type Server struct {
	dataDir string
	socket  string
	pidFile string
	logger  *slog.Logger

	// cmd is nil when the server was already running and is only reused.
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	stderr  *cappedBuffer

	stopOnce sync.Once
	stopErr  error
}

// Start returns a server for opts.DataDir. If a server started on that data
// dir is already running (its pid file names a live mariadbd/mysqld and its
// socket answers), Start reuses it and Stop will leave it running. Otherwise
// Start initialises the data dir if it holds no system database yet, starts
// the server (mariadbd/mysqld from PATH, /usr/sbin or /usr/libexec, with
// --no-defaults and --skip-networking; as root with --user=root), and
// returns once it answers queries.
//
// Concurrent Starts on one data dir, in this or other processes, are
// serialised by a lock file DataDir + ".lock", so exactly one of them starts
// the server. If no server binary is installed, the error is ErrNoServer.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.DataDir == "" {
		return nil, errors.New("mysqld: Options.DataDir is empty")
	}
	dataDir, logger, lookPath, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	socket, err := socketPath(dataDir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		dataDir: dataDir,
		socket:  socket,
		pidFile: filepath.Join(dataDir, pidName),
		logger:  logger,
	}

	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return nil, fmt.Errorf("mysqld: create parent of data dir: %w", err)
	}
	release, err := lockDataDir(ctx, dataDir+".lock")
	if err != nil {
		return nil, err
	}
	defer release()

	running, err := s.findRunning(ctx)
	if err != nil {
		return nil, err
	}
	if running {
		s.logger.Debug("mysqld: reusing running server", "socket", socket)
		return s, nil
	}
	if ping(ctx, socket) == nil {
		return nil, fmt.Errorf("mysqld: a server answers on %s but its pid file %s is missing: stop it (mariadb-admin --socket=%s shutdown) and start again", socket, s.pidFile, socket)
	}

	bins, err := findBinaries(ctx, lookPath)
	if err != nil {
		if errors.Is(err, ErrNoServer) {
			return nil, err
		}
		return nil, fmt.Errorf("mysqld: %w", err)
	}
	tmpDir, err := initialiseDataDir(ctx, bins, dataDir, s.logger)
	if err != nil {
		return nil, err
	}
	if err := s.start(ctx, bins, tmpDir, opts.Args); err != nil {
		return nil, err
	}
	return s, nil
}

// socketPath returns DataDir/mysqld.sock, or a short path in os.TempDir()
// derived from the data dir when that would exceed maxSocketPath.
func socketPath(dataDir string) (string, error) {
	p := filepath.Join(dataDir, socketName)
	if len(p) <= maxSocketPath {
		return p, nil
	}
	sum := sha256.Sum256([]byte(dataDir))
	p = filepath.Join(os.TempDir(), "runsdesk-mysqld-"+hex.EncodeToString(sum[:8])+".sock")
	if len(p) > maxSocketPath {
		return "", fmt.Errorf("mysqld: socket path %s is longer than %d bytes, the unix socket limit: use a shorter data dir or TMPDIR", p, maxSocketPath)
	}
	return p, nil
}

// lockDataDir takes the start lock, polling so ctx can cancel the wait.
func lockDataDir(ctx context.Context, path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mysqld: open lock file: %w", err)
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("mysqld: lock %s: %w", path, err)
		}
		if ok {
			return func() {
				_ = unlock(f)
				f.Close()
			}, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("mysqld: waiting for lock %s held by another process: %w", path, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// findRunning reports whether a server from a previous Start still runs on
// the data dir and answers. A pid file whose process is gone is removed.
func (s *Server) findRunning(ctx context.Context) (bool, error) {
	pid, err := readPidFile(s.pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !looksLikeServer(pid, s.dataDir) {
		s.logger.Info("mysqld: removing stale pid file", "pid", pid)
		if err := os.Remove(s.pidFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("mysqld: remove stale pid file: %w", err)
		}
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		if ping(ctx, s.socket) == nil {
			return true, nil
		}
		if !looksLikeServer(pid, s.dataDir) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("mysqld: server process %d from %s is running but socket %s does not answer: stop that process or remove the pid file (%w)", pid, s.pidFile, s.socket, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func readPidFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("mysqld: pid file %s holds %q, not a pid: remove it", path, strings.TrimSpace(string(b)))
	}
	return pid, nil
}

// Init initialises opts.DataDir as Start would, without starting a server, for a caller that
// prepares the data dir further before its first Start. A data dir that already holds a
// system database is left as it is. Unlike Start it does not take the start lock.
func Init(ctx context.Context, opts Options) error {
	dataDir, logger, lookPath, err := opts.resolved()
	if err != nil {
		return err
	}
	bins, err := findBinaries(ctx, lookPath)
	if err != nil {
		return err
	}
	_, err = initialiseDataDir(ctx, bins, dataDir, logger)
	return err
}

// resolved is what Start and Init work with: the data dir made absolute, the logger naming it
// (slog.Default's when Logger is nil) and how the binaries are found (defaultLookPath when
// LookPath is nil).
func (o Options) resolved() (dataDir string, logger *slog.Logger, lookPath func(string) (string, error), err error) {
	dataDir, err = filepath.Abs(o.DataDir)
	if err != nil {
		return "", nil, nil, fmt.Errorf("mysqld: data dir %q: %w", o.DataDir, err)
	}
	logger, lookPath = o.Logger, o.LookPath
	if logger == nil {
		logger = slog.Default()
	}
	if lookPath == nil {
		lookPath = defaultLookPath
	}
	return dataDir, logger.With("datadir", dataDir), lookPath, nil
}

// initialiseDataDir creates the server's tmpdir beside dataDir, initialises dataDir and
// returns the tmpdir.
func initialiseDataDir(ctx context.Context, bins binaries, dataDir string, logger *slog.Logger) (string, error) {
	tmpDir := dataDir + ".tmp"
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return "", fmt.Errorf("mysqld: create tmpdir: %w", err)
	}
	return tmpDir, initialise(ctx, bins, dataDir, tmpDir, logger)
}

// initialise creates the system database in dataDir unless it already has
// one. It builds it in a sibling directory and renames it into place, so an
// interrupted initialisation never leaves a half-made data dir behind.
func initialise(ctx context.Context, bins binaries, dataDir, tmpDir string, logger *slog.Logger) error {
	if fi, err := os.Stat(filepath.Join(dataDir, "mysql")); err == nil && fi.IsDir() {
		return nil
	}
	entries, err := os.ReadDir(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("mysqld: read data dir: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("mysqld: data dir %s is not empty but holds no MariaDB/MySQL system database: remove it or choose another", dataDir)
	}

	parent, base := filepath.Dir(dataDir), filepath.Base(dataDir)
	if stale, _ := filepath.Glob(filepath.Join(parent, base+".init-*")); len(stale) > 0 {
		for _, dir := range stale {
			_ = os.RemoveAll(dir)
		}
	}
	tmp, err := os.MkdirTemp(parent, base+".init-")
	if err != nil {
		return fmt.Errorf("mysqld: create directory to initialise the data dir in: %w", err)
	}
	defer os.RemoveAll(tmp)

	var cmd *exec.Cmd
	if bins.flavor == mariaDB {
		args := []string{"--no-defaults", "--auth-root-authentication-method=normal", "--force", "--datadir=" + tmp, "--tmpdir=" + tmpDir}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		cmd = exec.CommandContext(ctx, bins.installDB, args...)
	} else {
		args := []string{"--no-defaults", "--initialize-insecure", "--datadir=" + tmp, "--tmpdir=" + tmpDir}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		cmd = exec.CommandContext(ctx, bins.server, args...)
	}
	logger.Info("mysqld: initialising data dir", "command", cmd.String())
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mysqld: initialise data dir with %s: %w\n%s", cmd.String(), err, head(out, 12))
	}
	if err := os.Remove(dataDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mysqld: replace empty data dir: %w", err)
	}
	if err := os.Rename(tmp, dataDir); err != nil {
		return fmt.Errorf("mysqld: move initialised data dir into place: %w", err)
	}
	logger.Info("mysqld: initialised data dir", "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

func (s *Server) start(ctx context.Context, bins binaries, tmpDir string, extra []string) error {
	if err := os.Remove(s.socket); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mysqld: remove stale socket: %w", err)
	}
	errLog := filepath.Join(s.dataDir, logName)
	args := []string{
		"--no-defaults",
		"--datadir=" + s.dataDir,
		"--socket=" + s.socket,
		"--pid-file=" + s.pidFile,
		"--log-error=" + errLog,
		"--tmpdir=" + tmpDir,
		"--skip-networking",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_unicode_ci",
		"--max-connections=500",
	}
	if bins.flavor == mySQL {
		args = append(args, "--loose-mysqlx=OFF")
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	args = append(args, extra...)
	cmd := exec.Command(bins.server, args...)
	cmd.SysProcAttr = serverSysProcAttr()
	s.stderr = &cappedBuffer{max: 8 << 10}
	cmd.Stdout = s.stderr
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("mysqld: start %s: %w", bins.server, err)
	}
	s.cmd = cmd
	s.exited = make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()

	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		if ping(ctx, s.socket) == nil {
			s.logger.Info("mysqld: server started", "pid", cmd.Process.Pid, "socket", s.socket,
				"version", bins.version, "duration", time.Since(started).Round(time.Millisecond))
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("mysqld: %s exited during start-up (%v); last lines of %s:\n%s%s",
				bins.server, s.waitErr, errLog, s.logTail(20), s.stderr.String())
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-s.exited
			return fmt.Errorf("mysqld: %s did not answer on %s: %w; last lines of %s:\n%s",
				bins.server, s.socket, ctx.Err(), errLog, s.logTail(20))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ping connects over the socket as root and runs a ping.
func ping(ctx context.Context, socket string) error {
	if _, err := os.Stat(socket); err != nil {
		return err
	}
	cfg := rootConfig(socket, "")
	cfg.Timeout = time.Second
	cfg.Logger = &mysql.NopLogger{}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

func rootConfig(socket, database string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = socket
	cfg.DBName = database
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	return cfg
}

// DSN returns a go-sql-driver/mysql DSN for database (empty: none selected)
// as root over the unix socket, with parseTime=true, loc=UTC and the session
// time_zone '+00:00'.
func (s *Server) DSN(database string) string {
	return rootConfig(s.socket, database).FormatDSN()
}

// Socket returns the path of the server's unix socket.
func (s *Server) Socket() string { return s.socket }

// DataDir returns the absolute data directory.
func (s *Server) DataDir() string { return s.dataDir }

// Owned reports whether this Server started the process, and so whether
// Stop will shut it down; false means an already running server is reused.
func (s *Server) Owned() bool { return s.cmd != nil }

// EnsureDatabase creates database name (utf8mb4, utf8mb4_unicode_ci) unless
// it exists. The name must be 1–64 characters without NUL.
func (s *Server) EnsureDatabase(ctx context.Context, name string) error {
	if name == "" || len(name) > 64 || strings.ContainsRune(name, 0) {
		return fmt.Errorf("mysqld: invalid database name %q: want 1-64 characters without NUL", name)
	}
	connector, err := mysql.NewConnector(rootConfig(s.socket, ""))
	if err != nil {
		return fmt.Errorf("mysqld: %w", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	quoted := "`" + strings.ReplaceAll(name, "`", "``") + "`"
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoted+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		return fmt.Errorf("mysqld: create database %s: %w", quoted, err)
	}
	return nil
}

// Stop shuts down a server this Server started: SIGTERM, then SIGKILL if it
// has not exited when ctx ends or after one minute. It returns nil for a
// reused server, which keeps running. Calling Stop again returns the first
// result. After Stop the socket and pid file are gone.
func (s *Server) Stop(ctx context.Context) error {
	if s.cmd == nil {
		return nil
	}
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Server) stop(ctx context.Context) error {
	select {
	case <-s.exited:
		s.cleanupFiles()
		return fmt.Errorf("mysqld: server had already exited (%v); last lines of its log:\n%s", s.waitErr, s.logTail(20))
	default:
	}
	started := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("mysqld: signal server: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	select {
	case <-s.exited:
	case <-ctx.Done():
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.cleanupFiles()
		return fmt.Errorf("mysqld: server %d did not shut down in time and was killed: %w", s.cmd.Process.Pid, ctx.Err())
	}
	s.cleanupFiles()
	if s.waitErr != nil {
		return fmt.Errorf("mysqld: server exited with %w; last lines of its log:\n%s", s.waitErr, s.logTail(20))
	}
	s.logger.Info("mysqld: server stopped", "duration", time.Since(started).Round(time.Millisecond))
	return nil
}

// Kill ends a server this Server started with SIGKILL, as a crash would, and waits for the
// process to exit; the data dir keeps whatever the crash left. Stop afterwards returns the
// kill's result. It returns an error for a reused server, which it leaves running.
func (s *Server) Kill() error {
	if s.cmd == nil {
		return errors.New("mysqld: kill: the server was not started by this process")
	}
	s.stopOnce.Do(func() {
		if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			s.stopErr = fmt.Errorf("mysqld: kill server %d: %w", s.cmd.Process.Pid, err)
			return
		}
		<-s.exited
		s.cleanupFiles()
	})
	return s.stopErr
}

// Binary returns the path of the server executable Start would run (mariadbd or mysqld), or
// ErrNoServer.
func Binary(ctx context.Context) (string, error) {
	bins, err := findBinaries(ctx, defaultLookPath)
	if err != nil {
		return "", err
	}
	return bins.server, nil
}

// cleanupFiles removes what a killed server leaves behind.
func (s *Server) cleanupFiles() {
	_ = os.Remove(s.socket)
	_ = os.Remove(s.pidFile)
}

func (s *Server) logTail(n int) string {
	b, err := os.ReadFile(filepath.Join(s.dataDir, logName))
	if err != nil {
		return fmt.Sprintf("(cannot read error log: %v)\n", err)
	}
	return tail(b, n)
}

// head returns the first n lines of b.
func head(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n") + "\n"
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
