package db

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// Bounds of the statement texts each set prepares; later texts are sent as before, with the
// arguments interpolated. Each text is prepared once per pooled connection, so a process holds
// at most (maxPrepared + maxPreparedLists + 3 × maxPreparedFew) × maxOpenConns = 1,728 on the
// server, whose max_prepared_stmt_count (default 16,382) counts every client's.
const (
	// maxPrepared: the Store's fixed statements (a run's transitions, events, reads).
	maxPrepared = 32
	// maxPreparedLists: the list queries, whose texts vary with their filters.
	maxPreparedLists = 16
	// maxPreparedFew: a session store's, the session index's or the accounts' hot read.
	maxPreparedFew = 2
)

// statements runs the fixed statements of the hot paths (a decision, a segment's writes, the
// inbox page, the signed-in request's reads) as server-side prepared statements: an execution
// sends only its arguments, in binary, and the server parses nothing (for a transition that
// carries a suspended state of a few KiB, the parse was a good part of its cost). A text is
// prepared in the background the first time it is asked for (never while a caller holds a
// connection and waits, which could exhaust the pool) and sent interpolated until then, as
// also when it cannot be prepared (the server's limit, a lost connection) or the set is full.
// database/sql prepares it again on each connection the first time it runs there and keeps
// it. It is safe for concurrent use.
type statements struct {
	pool  *sql.DB
	limit int
	mu    sync.Mutex
	m     map[string]*sql.Stmt
	// pending are the texts being prepared.
	pending map[string]bool
	// refused: the server refused to prepare more (max_prepared_stmt_count); from then on
	// every statement of the set is sent interpolated.
	refused bool
}

// newStatements returns a set preparing at most limit texts on pool.
func newStatements(pool *sql.DB, limit int) *statements {
	return &statements{pool: pool, limit: limit, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// prepareTimeout bounds a background preparation.
const prepareTimeout = 5 * time.Second

// stmt returns query prepared on the pool, or nil when it is not (yet): then it starts
// preparing it unless the set is full or that is under way. A failed preparation is not
// remembered; the next ask tries again.
func (p *statements) stmt(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused {
		return nil
	}
	if st, ok := p.m[query]; ok {
		return st
	}
	if p.pending[query] || len(p.m)+len(p.pending) >= p.limit {
		return nil
	}
	p.pending[query] = true
	go p.prepare(query)
	return nil
}

func (p *statements) prepare(query string) {
	ctx, cancel := context.WithTimeout(context.Background(), prepareTimeout)
	defer cancel()
	st, err := p.pool.PrepareContext(ctx, query)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pending, query)
	switch {
	case err == nil:
		p.m[query] = st
	case isMySQLError(err, errPreparedLimit):
		p.refused = true
	}
}

// refusedBy notes err when it is the server's refusal to prepare more, and reports it.
func (p *statements) refusedBy(err error) bool {
	if !isMySQLError(err, errPreparedLimit) {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused = true
	return true
}

// on returns a querier that runs statements prepared, on the pool (tx nil) or in tx.
func (p *statements) on(tx *sql.Tx) prepared { return prepared{set: p, tx: tx} }

// querier is what the Store's statements run on: the pool, a transaction or a prepared.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// prepared runs each statement as its prepared statement, in tx when tx is set.
type prepared struct {
	set *statements
	tx  *sql.Tx
}

// plain is the pool or the transaction, for statements run without preparing.
func (p prepared) plain() querier {
	if p.tx != nil {
		return p.tx
	}
	return p.set.pool
}

// bound returns query's prepared statement for this pool or transaction, nil when there is none.
func (p prepared) bound(ctx context.Context, query string) *sql.Stmt {
	st := p.set.stmt(query)
	if st == nil || p.tx == nil {
		return st
	}
	return p.tx.StmtContext(ctx, st)
}

// ExecContext runs query prepared; a statement the server will not prepare is sent plain. On
// the pool (autocommit) the statement is retried as a whole after a transient error
// (retryTransient), as execRetrying does; in a transaction the whole transaction is retried
// by its caller.
func (p prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if p.tx != nil {
		return p.exec(ctx, query, args...)
	}
	var res sql.Result
	err := retryTransient(ctx, nil, func() error {
		var err error
		res, err = p.exec(ctx, query, args...)
		return err
	})
	return res, err
}

// exec runs query once, prepared when the server allows it.
func (p prepared) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.bound(ctx, query); st != nil {
		res, err := st.ExecContext(ctx, args...)
		if !p.set.refusedBy(err) {
			return res, err
		}
	}
	return p.plain().ExecContext(ctx, query, args...)
}

// QueryContext runs query prepared; a statement the server will not prepare is sent plain.
func (p prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.bound(ctx, query); st != nil {
		rows, err := st.QueryContext(ctx, args...)
		if !p.set.refusedBy(err) {
			return rows, err
		}
	}
	return p.plain().QueryContext(ctx, query, args...)
}

// QueryRowContext runs query prepared. Its errors surface at Scan, so the server's refusal to
// prepare it on a connection surfaces once as the read's error (later reads go plain once an
// execution or a preparation of the set met the refusal).
func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.bound(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.plain().QueryRowContext(ctx, query, args...)
}
