package benchapp

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// RoundTrips counts the round trips an application's connections make to the database: a
// request written and its answer awaited counts once, however many packets either holds, so
// a batched transaction is one and a statement sent alone is one. Connecting counts too (the
// handshake's exchanges), which a warm pool seldom does.
type RoundTrips struct{ n atomic.Int64 }

// Count returns the round trips counted so far.
func (t *RoundTrips) Count() int64 { return t.n.Load() }

// dsn returns dsn with its network replaced by one registered with the MySQL driver under a
// name of t's own, whose connections dial the original network and count into t.
func (t *RoundTrips) dsn(dsn string) (string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("benchapp: round trips: DSN: %w", err)
	}
	network := cfg.Net
	name := fmt.Sprintf("benchtrips%p", t)
	mysql.RegisterDialContext(name, func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, trips: &t.n}, nil
	})
	cfg.Net = name
	return cfg.FormatDSN(), nil
}

// countingConn counts a round trip at the first read after a write. The driver reads and
// writes a connection from one goroutine at a time.
type countingConn struct {
	net.Conn
	trips *atomic.Int64
	wrote bool
}

// Write sends p and marks an answer as awaited.
func (c *countingConn) Write(p []byte) (int, error) {
	c.wrote = true
	return c.Conn.Write(p)
}

// Read receives the answer, counting a round trip when a request was written before it.
func (c *countingConn) Read(p []byte) (int, error) {
	if c.wrote {
		c.wrote = false
		c.trips.Add(1)
	}
	return c.Conn.Read(p)
}
