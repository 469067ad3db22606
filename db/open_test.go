package db

import (
	"database/sql"
	"strings"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dsn := newDatabase(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	pool, err := Open(t.Context(), dsn+sep+"multiStatements=true")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var tz string
	if err := pool.QueryRow(`SELECT @@session.time_zone`).Scan(&tz); err != nil || tz != "+00:00" {
		t.Fatalf("session time_zone: got %q, %v, want +00:00", tz, err)
	}
	var ts time.Time
	if err := pool.QueryRow(`SELECT TIMESTAMP('2030-01-02 03:04:05')`).Scan(&ts); err != nil ||
		!ts.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("parseTime: got %v, %v, want 2030-01-02T03:04:05Z", ts, err)
	}
	if _, err := pool.Exec(`DO 1; DO 2`); err == nil {
		t.Fatalf("multi-statement on the application pool: got nil error, want a refusal")
	}
	if n := preparedAround(t, pool, func(conn *sql.Conn) error {
		var got string
		return conn.QueryRowContext(t.Context(), `SELECT CONCAT(?, ?)`, "a", 1).Scan(&got)
	}); n != 0 {
		t.Fatalf("a query with arguments prepared %d statement(s) on the server, want 0 (interpolateParams)", n)
	}
	if got := pool.Stats().MaxOpenConnections; got != maxOpenConns {
		t.Fatalf("MaxOpenConnections: got %d, want %d", got, maxOpenConns)
	}
}

func TestOpenUnreachable(t *testing.T) {
	start := time.Now()
	_, err := Open(t.Context(), "u:p@tcp(127.0.0.1:1)/x?timeout=1s")
	if err == nil {
		t.Fatalf("Open of an unreachable server: got nil error")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Open of an unreachable server took %v, want under the ping deadline", d)
	}
}

// preparedAround is how many statements the server prepared for f on one connection.
func preparedAround(t *testing.T, pool *sql.DB, f func(*sql.Conn) error) int {
	t.Helper()
	conn, err := pool.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	count := func() int {
		var name string
		var n int
		if err := conn.QueryRowContext(t.Context(), `SHOW SESSION STATUS LIKE 'Com_stmt_prepare'`).Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	if err := f(conn); err != nil {
		t.Fatal(err)
	}
	return count() - before
}

// Causal reads are turned on only where they mean something: a server that is not a Galera
// node keeps wsrep_sync_wait at 0, and a DSN that sets it is obeyed.
func TestOpenCausalReadsOnlyOnGaleraOrWhenAsked(t *testing.T) {
	dsn := newDatabase(t)
	for _, c := range []struct {
		params string
		want   int
	}{{"", 0}, {"&wsrep_sync_wait=1", 1}} {
		pool, err := Open(t.Context(), dsn+c.params)
		if err != nil {
			t.Fatal(err)
		}
		var got int
		err = pool.QueryRow(`SELECT @@session.wsrep_sync_wait`).Scan(&got)
		pool.Close()
		if err != nil || got != c.want {
			t.Errorf("DSN params %q: wsrep_sync_wait = %d, %v; want %d", c.params, got, err, c.want)
		}
	}
}
