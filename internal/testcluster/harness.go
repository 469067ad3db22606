package testcluster

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
	"testing"
	"time"
)

// EnvRequire names the environment variable that, when set, turns a missing Galera
// installation from a skipped test into a failed one (.ci/run sets it).
const EnvRequire = "RUNSDESK_REQUIRE_GALERA"

// Harness shares one cluster among the tests of a test binary: the first Cluster call starts
// it, Close stops it and removes its directory. The zero value is ready to use.
type Harness struct {
	once    sync.Once
	cluster *Cluster
	err     error
	dir     string
	started time.Duration
}

// Cluster returns the shared cluster, starting it on first use. Without the packages it skips
// tb with what to install, or fails it when EnvRequire is set.
func (h *Harness) Cluster(tb testing.TB) *Cluster {
	tb.Helper()
	h.once.Do(h.start)
	if errors.Is(h.err, ErrNoGalera) {
		if os.Getenv(EnvRequire) != "" {
			tb.Fatalf("%s is set but %v", EnvRequire, h.err)
		}
		tb.Skipf("Galera suite skipped: %v (set %s=1 to make this a failure)", h.err, EnvRequire)
	}
	if h.err != nil {
		tb.Fatalf("%v", h.err)
	}
	return h.cluster
}

// StartTime is how long the shared cluster took to reach Synced on every node.
func (h *Harness) StartTime() time.Duration { return h.started }

func (h *Harness) start() {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, h.err = Provider(ctx); h.err != nil {
		return
	}
	h.dir, h.err = os.MkdirTemp("", "runsdesk-galera-")
	if h.err != nil {
		h.err = fmt.Errorf("galera: create the cluster's directory: %w", h.err)
		return
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	began := time.Now()
	h.cluster, h.err = Start(ctx, Options{Dir: filepath.Join(h.dir, "cluster"), Logger: logger})
	h.started = time.Since(began)
}

// Close stops the shared cluster, if it was started, and removes its directory.
func (h *Harness) Close() error {
	var err error
	if h.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		err = h.cluster.Stop(ctx)
	}
	if h.dir != "" {
		err = errors.Join(err, os.RemoveAll(h.dir))
	}
	return err
}

// NewDatabase creates an empty database with a unique name on the cluster (it replicates to
// every node) and returns its name; a cleanup drops it.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := "g_" + strings.NewReplacer("/", "_", "-", "_", " ", "_").Replace(strings.ToLower(tb.Name()))
	name = name[:min(len(name), 40)] + "_" + hex.EncodeToString(suffix)
	pool, err := sql.Open("mysql", c.DSN(1, ""))
	if err != nil {
		tb.Fatalf("galera: %v", err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := pool.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		tb.Fatalf("galera: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		pool, err := sql.Open("mysql", c.DSN(1, ""))
		if err != nil {
			return
		}
		defer pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := pool.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			tb.Errorf("galera: drop database %s: %v", name, err)
		}
	})
	return name
}
