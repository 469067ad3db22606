package mysqld_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"runsdesk/db/mysqld"
)

func start(t *testing.T, dataDir string) *mysqld.Server {
	t.Helper()
	return startLogged(t, dataDir, testLogger(t))
}

// startLogged is start with logger.
func startLogged(t *testing.T, dataDir string, logger *slog.Logger) *mysqld.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := mysqld.Start(ctx, mysqld.Options{DataDir: dataDir, Logger: logger})
	if err != nil {
		t.Fatalf("Start(%s): %v", dataDir, err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("cleanup Stop: %v", err)
		}
	})
	return s
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("sql.Open(%q): %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func stop(t *testing.T, s *mysqld.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

func assertGone(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists after Stop (stat error %v)", path, err)
	}
}

func TestStartQueryStop(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mysql")
	s := start(t, dir)
	ctx := context.Background()

	if !s.Owned() {
		t.Fatal("Owned() = false for a freshly started server")
	}
	if got, want := s.Socket(), filepath.Join(dir, "mysqld.sock"); got != want {
		t.Errorf("Socket() = %q, want %q", got, want)
	}
	dsn := s.DSN("app")
	for _, want := range []string{"@unix(" + s.Socket() + ")/app?", "parseTime=true", "time_zone=%27%2B00%3A00%27"} {
		if !strings.Contains(dsn, want) {
			t.Errorf("DSN(app) = %q, want it to contain %q", dsn, want)
		}
	}
	if err := s.EnsureDatabase(ctx, "app"); err != nil {
		t.Fatalf("EnsureDatabase: %v", err)
	}
	if err := s.EnsureDatabase(ctx, "app"); err != nil {
		t.Fatalf("EnsureDatabase on an existing database: %v", err)
	}

	db := open(t, dsn)
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), at DATETIME)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1, 'äöü 🙂', '2024-05-06 07:08:09')"); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var (
		name      string
		at        time.Time
		tz, chset string
	)
	err := db.QueryRowContext(ctx, "SELECT name, at, @@session.time_zone, @@character_set_database FROM t WHERE id = 1").Scan(&name, &at, &tz, &chset)
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	if want := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC); name != "äöü 🙂" || !at.Equal(want) || at.Location() != time.UTC || tz != "+00:00" || chset != "utf8mb4" {
		t.Errorf("got name=%q at=%v tz=%q charset=%q, want %q %v +00:00 utf8mb4", name, at, tz, chset, "äöü 🙂", want)
	}
	db.Close()

	for _, bad := range []string{"", strings.Repeat("x", 65), "a\x00b"} {
		if err := s.EnsureDatabase(ctx, bad); err == nil {
			t.Errorf("EnsureDatabase(%q) = nil, want an error", bad)
		}
	}
	if err := s.EnsureDatabase(ctx, "odd`name"); err != nil {
		t.Errorf("EnsureDatabase(odd`name): %v", err)
	}

	stop(t, s)
	assertGone(t, s.Socket())
	assertGone(t, filepath.Join(dir, "mysqld.pid"))
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v, want nil", err)
	}
}

func TestStartTwiceReusesAndRestartKeepsData(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mysql")
	first := start(t, dir)
	ctx := context.Background()
	if err := first.EnsureDatabase(ctx, "kept"); err != nil {
		t.Fatalf("EnsureDatabase: %v", err)
	}

	var logs bytes.Buffer
	second := startLogged(t, dir, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if second.Owned() {
		t.Fatal("second Start on a running data dir: Owned() = true, want a reused server")
	}
	if !strings.Contains(logs.String(), `"level":"DEBUG","msg":"mysqld: reusing running server"`) {
		t.Errorf("the reuse is not logged at debug level only:\n%s", logs.String())
	}
	if second.Socket() != first.Socket() {
		t.Errorf("second Socket() = %q, want %q", second.Socket(), first.Socket())
	}
	stop(t, second)
	keptDB := open(t, first.DSN("kept"))
	if err := keptDB.PingContext(ctx); err != nil {
		t.Fatalf("server stopped by a Server that only reused it: %v", err)
	}

	keptDB.Close()
	stop(t, first)
	assertGone(t, first.Socket())

	// A pid file naming a live process that is not the server is stale.
	pidFile := filepath.Join(dir, "mysqld.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	third := start(t, dir)
	if !third.Owned() {
		t.Fatal("Start after Stop with a stale pid file: Owned() = false, want a new server")
	}
	var n int
	if err := open(t, third.DSN("")).QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'kept'").Scan(&n); err != nil || n != 1 {
		t.Errorf("database created before the restart: count=%d err=%v, want 1 <nil>", n, err)
	}
}

func TestConcurrentStartsShareOneServer(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mysql")
	const n = 4
	servers := make([]*mysqld.Server, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := mysqld.Start(context.Background(), mysqld.Options{DataDir: dir, Logger: testLogger(t)})
			if err != nil {
				t.Errorf("Start %d: %v", i, err)
				return
			}
			servers[i] = s
		})
	}
	wg.Wait()
	owned := 0
	for _, s := range servers {
		if s != nil && s.Owned() {
			owned++
		}
	}
	for _, s := range servers {
		if s != nil && !s.Owned() {
			stop(t, s)
		}
	}
	for _, s := range servers {
		if s != nil && s.Owned() {
			stop(t, s)
		}
	}
	if owned != 1 {
		t.Errorf("%d of %d concurrent Starts own a server, want exactly 1", owned, n)
	}
}

func TestNoServerInstalled(t *testing.T) {
	t.Parallel()
	_, err := mysqld.Start(context.Background(), mysqld.Options{
		DataDir:  t.TempDir(),
		Logger:   testLogger(t),
		LookPath: func(name string) (string, error) { return "", exec.ErrNotFound },
	})
	const want = "no MariaDB/MySQL server found on PATH: install it (Debian/Ubuntu: apt-get install mariadb-server; macOS: brew install mariadb)"
	if err == nil || err.Error() != want {
		t.Fatalf("Start without a server binary: error %v, want %q", err, want)
	}
	if !errors.Is(err, mysqld.ErrNoServer) {
		t.Errorf("errors.Is(err, ErrNoServer) = false")
	}
}

func TestForeignDataDirRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := mysqld.Start(context.Background(), mysqld.Options{DataDir: dir, Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), "is not empty but holds no MariaDB/MySQL system database") {
		t.Fatalf("Start on a non-empty foreign dir: error %v, want it refused", err)
	}
}

// Init prepares a data dir without starting a server; Start with Args passes them to the
// server; Kill ends it as a crash would, and a later Start on the same data dir recovers
// what was committed.
func TestInitArgsKillAndStartAgain(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mysql")
	ctx := context.Background()
	if err := mysqld.Init(ctx, mysqld.Options{DataDir: dir, Logger: testLogger(t)}); err != nil {
		t.Fatalf("Init: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mysql")); err != nil {
		t.Fatalf("Init left no system database: %v", err)
	}
	s, err := mysqld.Start(ctx, mysqld.Options{DataDir: dir, Logger: testLogger(t), Args: []string{"--max-connections=77"}})
	if err != nil {
		t.Fatalf("Start with Args: %v", err)
	}
	db := open(t, s.DSN(""))
	var maxConns int
	if err := db.QueryRow(`SELECT @@max_connections`).Scan(&maxConns); err != nil || maxConns != 77 {
		t.Fatalf("max_connections = %d, %v; want 77 from Args (given after Start's own 500)", maxConns, err)
	}
	if _, err := db.Exec(`CREATE DATABASE k`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE k.t (id int PRIMARY KEY) ENGINE=InnoDB`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO k.t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := s.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	assertGone(t, s.Socket())
	again := start(t, dir)
	var n int
	if err := open(t, again.DSN("")).QueryRow(`SELECT COUNT(*) FROM k.t`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after Kill and Start: %d rows, %v; want the committed row", n, err)
	}
}
