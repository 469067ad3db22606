// Package dbtest gives each test its own empty MariaDB/MySQL database.
//
// A package whose tests need a database declares
//
//	func TestMain(m *testing.M) { dbtest.Main(m) }
//
// and calls NewDatabase in each test. The server is the one named by
// RUNSDESK_TEST_DSN if that is set (its user must be allowed to create and
// drop databases); otherwise a private server is started once per test
// binary, on first use, in a temporary directory (see package
// runsdesk/db/mysqld), and stopped by Main when the tests are done.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"runsdesk/db/mysqld"
)

// EnvDSN names the environment variable holding the DSN of an existing
// server to create test databases on; its database part is ignored.
const EnvDSN = "RUNSDESK_TEST_DSN"

// harness is the server shared by all tests of one test binary.
type harness struct {
	mainCalled atomic.Bool

	once    sync.Once
	started bool
	err     error
	source  string        // where the server came from, for error messages
	base    *mysql.Config // DSN template handed to tests, DBName empty
	admin   *sql.DB       // creates and drops the test databases
	server  *mysqld.Server
	tempDir string
}

var shared harness

// throwawayServer are the private server's options beyond mysqld.Start's: its data lives as
// long as the test binary, so a commit need not reach the disk before it is acknowledged
// (no log flush or doublewrite buffer per commit). What a statement does, and what another
// session sees, is as on any server.
func throwawayServer() []string {
	return []string{"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0", "--sync-binlog=0"}
}

// Main runs the tests, then calls each of after (to release what the tests
// shared, such as a browser), stops the private server if one was started,
// removes its directory and exits with the tests' status (1 if stopping
// failed after passing tests).
func Main(m *testing.M, after ...func()) {
	shared.mainCalled.Store(true)
	code := m.Run()
	for _, f := range after {
		f()
	}
	if err := shared.close(); err != nil {
		fmt.Fprintf(os.Stderr, "dbtest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// NewDatabase creates an empty database with a unique name and returns a
// DSN for it with parseTime=true, loc=UTC, session time_zone '+00:00' and
// no multiStatements. The database is dropped by a cleanup registered here;
// cleanups run last-in first-out, so a *sql.DB the test opens afterwards and
// closes with tb.Cleanup is closed before the drop. Safe for parallel tests.
// It fails tb if TestMain does not call Main or if no server can be reached
// or started.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	if !shared.mainCalled.Load() {
		tb.Fatal("dbtest: TestMain must call dbtest.Main(m), which stops the private server after the tests")
	}
	shared.once.Do(shared.setup)
	if shared.err != nil {
		tb.Fatalf("dbtest: %v", shared.err)
	}

	name := databaseName(tb.Name())
	quoted := "`" + name + "`"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := shared.admin.ExecContext(ctx, "CREATE DATABASE "+quoted+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		tb.Fatalf("dbtest: create database %s on %s: %v", name, shared.source, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := shared.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoted); err != nil {
			tb.Errorf("dbtest: drop database %s (is a transaction on it still open?): %v", name, err)
		}
	})

	cfg := shared.base.Clone()
	cfg.DBName = name
	return cfg.FormatDSN()
}

// databaseName returns "t_<test name>_<random>", at most 64 characters of
// [a-z0-9_], so it needs no quoting beyond backticks and is unique.
func databaseName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= 40 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	return "t_" + b.String() + "_" + hex.EncodeToString(suffix)
}

func (h *harness) setup() {
	h.started = true
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var cfg *mysql.Config
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		c, err := mysql.ParseDSN(dsn)
		if err != nil {
			h.err = fmt.Errorf("%s is not a valid DSN: %w", EnvDSN, err)
			return
		}
		cfg = c
		redacted := c.Clone()
		if redacted.Passwd != "" {
			redacted.Passwd = "xxxxx"
		}
		h.source = EnvDSN + "=" + redacted.FormatDSN()
	} else {
		dir, err := os.MkdirTemp("", "runsdesk-dbtest-")
		if err != nil {
			h.err = fmt.Errorf("create directory for the private server: %w", err)
			return
		}
		h.tempDir = dir
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		srv, err := mysqld.Start(ctx, mysqld.Options{DataDir: filepath.Join(dir, "mysql"), Logger: logger, Args: throwawayServer()})
		if err != nil {
			h.err = fmt.Errorf("start the private test server (or set %s to use an existing one): %w", EnvDSN, err)
			return
		}
		h.server = srv
		h.source = "the private server on " + srv.Socket()
		cfg, err = mysql.ParseDSN(srv.DSN(""))
		if err != nil {
			h.err = fmt.Errorf("parse the private server's DSN: %w", err)
			return
		}
	}

	cfg.DBName = ""
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.MultiStatements = false
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	h.base = cfg

	adminCfg := cfg.Clone()
	adminCfg.Params["lock_wait_timeout"] = "30"
	connector, err := mysql.NewConnector(adminCfg)
	if err != nil {
		h.err = fmt.Errorf("%s: %w", h.source, err)
		return
	}
	h.admin = sql.OpenDB(connector)
	if err := h.admin.PingContext(ctx); err != nil {
		h.err = fmt.Errorf("connect to %s: %w", h.source, err)
	}
}

// close releases what setup acquired; it runs after all tests are done.
func (h *harness) close() error {
	if !h.started {
		return nil
	}
	var errs []error
	if h.admin != nil {
		if err := h.admin.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close admin connection: %w", err))
		}
	}
	if h.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := h.server.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop the private server: %w", err))
		}
	}
	if h.tempDir != "" {
		if err := os.RemoveAll(h.tempDir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", h.tempDir, err))
		}
	}
	return errors.Join(errs...)
}
