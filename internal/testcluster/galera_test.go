package testcluster_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"runsdesk/internal/testcluster"
)

var shared testcluster.Harness

func TestMain(m *testing.M) {
	code := m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// open opens a pool on node for database; params are appended to the DSN's query.
func open(t *testing.T, c *testcluster.Cluster, node int, database string, params ...string) *sql.DB {
	t.Helper()
	dsn := c.DSN(node, database)
	for _, p := range params {
		dsn += "&" + p
	}
	pool, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

// A row written on node 1 is read on every node; a node killed with SIGKILL misses writes
// made while it is down and has them after Restart.
func TestClusterReplicatesAndRejoinsAfterKill(t *testing.T) {
	c := shared.Cluster(t)
	t.Logf("cluster of %d nodes synced in %s", c.Size(), shared.StartTime().Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := c.NewDatabase(t)
	first := open(t, c, 1, name)
	if _, err := first.ExecContext(ctx, `CREATE TABLE t (id int PRIMARY KEY, v varchar(20))`); err != nil {
		t.Fatal(err)
	}
	if _, err := first.ExecContext(ctx, `INSERT INTO t VALUES (1, 'before')`); err != nil {
		t.Fatal(err)
	}
	for node := 1; node <= c.Size(); node++ {
		var v string
		if err := open(t, c, node, name, "wsrep_sync_wait=1").QueryRowContext(ctx, `SELECT v FROM t WHERE id = 1`).Scan(&v); err != nil || v != "before" {
			t.Fatalf("node %d: read %q, %v; want before", node, v, err)
		}
	}

	if err := c.Kill(2); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for {
		_, err := first.ExecContext(ctx, `INSERT INTO t VALUES (2, 'while down')`)
		if err == nil {
			break
		}
		if time.Since(began) > 30*time.Second {
			t.Fatalf("write on node 1 with node 2 down: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("node 1 accepted a write %s after node 2 was killed", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	if err := c.Restart(ctx, 2); err != nil {
		t.Fatal(err)
	}
	t.Logf("node 2 rejoined and synced in %s", time.Since(began).Round(time.Millisecond))
	var v string
	if err := open(t, c, 2, name).QueryRowContext(ctx, `SELECT v FROM t WHERE id = 2`).Scan(&v); err != nil || v != "while down" {
		t.Fatalf("node 2 after rejoin: read %q, %v; want the write it missed", v, err)
	}
}

// A joiner whose first start fails is started again on a fresh data dir, and the failed dir is
// kept: node 2's first data dir here holds a stray file, which the server's set-up refuses.
func TestStartRetriesAJoinerThatFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := testcluster.Provider(ctx); errors.Is(err, testcluster.ErrNoGalera) && os.Getenv(testcluster.EnvRequire) == "" {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "node2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node2", "stray"), []byte("not a data dir"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := testcluster.Start(ctx, testcluster.Options{Dir: dir, Nodes: 2})
	if err != nil {
		t.Fatalf("start with a joiner that fails once: %v", err)
	}
	defer func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	if _, err := os.Stat(filepath.Join(dir, "node2.failed-1", "stray")); err != nil {
		t.Errorf("the failed data dir was not kept: %v", err)
	}
	var size string
	if err := open(t, c, 2, "").QueryRowContext(ctx, `SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'`).Scan(&size); err != nil || size != "2" {
		t.Fatalf("node 2 after its second start: cluster size %q, %v; want 2", size, err)
	}
}
