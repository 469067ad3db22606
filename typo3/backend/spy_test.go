package backend_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
)

// spyLog records, for one *sql.DB, every statement sent and every value received.
type spyLog struct {
	mu         sync.Mutex
	statements []string
	values     []string
}

func (l *spyLog) statement(query string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statements = append(l.statements, query)
}

func (l *spyLog) received(dest []driver.Value) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range dest {
		if b, ok := v.([]byte); ok {
			l.values = append(l.values, string(b))
		} else {
			l.values = append(l.values, fmt.Sprint(v))
		}
	}
}

func (l *spyLog) snapshot() (statements, values []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.statements...), append([]string(nil), l.values...)
}

// spyConnector wraps the MariaDB driver's connector so that a test sees what crosses the
// wire: the statements sent and the values of every row returned.
type spyConnector struct {
	inner driver.Connector
	log   *spyLog
}

func (c spyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &spyConn{Conn: conn, log: c.log}, nil
}

func (c spyConnector) Driver() driver.Driver { return c.inner.Driver() }

type spyConn struct {
	driver.Conn
	log *spyLog
}

func (c *spyConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.log.statement(query)
	stmt, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &spyStmt{Stmt: stmt, log: c.log}, nil
}

func (c *spyConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	c.log.statement(query)
	return &spyRows{Rows: rows, log: c.log}, nil
}

func (c *spyConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.log.statement(query)
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *spyConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.log.statement("BEGIN")
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

type spyStmt struct {
	driver.Stmt
	log *spyLog
}

func (s *spyStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	return &spyRows{Rows: rows, log: s.log}, nil
}

func (s *spyStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.log.statement("EXEC of a prepared statement")
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

type spyRows struct {
	driver.Rows
	log *spyLog
}

func (r *spyRows) Next(dest []driver.Value) error {
	if err := r.Rows.Next(dest); err != nil {
		return err
	}
	r.log.received(dest)
	return nil
}
