package db

import (
	"context"
	"database/sql/driver"
	"errors"
	"regexp"

	"github.com/go-sql-driver/mysql"

	"runsdesk/cache"
)

// An OpenOption changes how Open, OpenBatches and Migrate reach the database.
type OpenOption func(*openOptions)

type openOptions struct {
	// names renames runsdesk's tables in every statement (nil: the names as written).
	names *tableNames
}

// BesideTYPO3 is the layout of `--typo3`: runsdesk runs on a TYPO3 site's database and keeps
// every row of its own in tables of its own (TYPO3Tables), so the site's be_users, be_groups
// and tx_nrllm_* tables keep the columns, keys and rows TYPO3 gave them. The store's SQL is
// written with the nr-llm names; a pool opened with this option sends it with runsdesk's.
func BesideTYPO3() OpenOption {
	return func(o *openOptions) { o.names = newTableNames(typo3Tables()) }
}

func applyOpenOptions(opts []OpenOption) openOptions {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// TYPO3Table is the table runsdesk uses beside TYPO3 for the table its SQL names name: its
// own for each table a TYPO3 site has or could have (the nr-llm extension's, be_users) or
// might name alike (sessions, schema_migrations), name itself for the others (every other
// table of runsdesk is a tx_runsdesk_ one already).
func TYPO3Table(name string) string {
	if own, ok := typo3Tables()[name]; ok {
		return own
	}
	return name
}

// typo3Tables is what TYPO3Table renames.
func typo3Tables() map[string]string {
	return map[string]string{
		"tx_nrllm_agentrun":         "tx_runsdesk_run",
		"tx_nrllm_agentrun_event":   "tx_runsdesk_run_event",
		"tx_nrllm_configuration":    "tx_runsdesk_configuration",
		"tx_nrllm_governance_event": "tx_runsdesk_governance_event",
		"be_users":                  "tx_runsdesk_person",
		"sessions":                  "tx_runsdesk_session_data",
		"schema_migrations":         "tx_runsdesk_schema_migrations",
		"schema_migrations_lock":    "tx_runsdesk_schema_migrations_lock",
	}
}

// maxRenamedTexts bounds the statement texts a pool remembers renamed: the store's texts are
// constants (and lists of placeholders), so a few hundred serve every request.
const maxRenamedTexts = 2048

// tableNames rewrites statement texts: every whole word that is a key of its map becomes the
// value. Arguments are not texts (the driver interpolates them after the rewrite), so no
// value is ever renamed.
type tableNames struct {
	words   *regexp.Regexp
	to      map[string]string
	renamed *cache.Cache[string, string]
}

func newTableNames(to map[string]string) *tableNames {
	alternatives := ""
	for from := range to {
		if alternatives != "" {
			alternatives += "|"
		}
		alternatives += regexp.QuoteMeta(from)
	}
	return &tableNames{
		words:   regexp.MustCompile(`\b(?:` + alternatives + `)\b`),
		to:      to,
		renamed: cache.New[string, string](cache.Options{Max: maxRenamedTexts}),
	}
}

// rename is text with its table names replaced.
func (n *tableNames) rename(text string) string {
	if out, ok := n.renamed.Get(text); ok {
		return out
	}
	out := n.words.ReplaceAllStringFunc(text, func(w string) string { return n.to[w] })
	n.renamed.Put(text, out)
	return out
}

// newConnector is the driver's connector for cfg, renaming tables as o says.
func newConnector(cfg *mysql.Config, o openOptions) (driver.Connector, error) {
	connector, err := mysql.NewConnector(cfg)
	if err != nil || o.names == nil {
		return connector, err
	}
	return renamingConnector{Connector: connector, names: o.names}, nil
}

// renamingConnector is a connector whose connections rename the tables of every statement.
type renamingConnector struct {
	driver.Connector
	names *tableNames
}

// Connect connects and wraps the connection.
func (c renamingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &renamingConn{Conn: conn, names: c.names}, nil
}

// renamingConn is a driver connection that renames tables in every statement text before its
// own connection sees it; everything else is passed through.
type renamingConn struct {
	driver.Conn
	names *tableNames
}

var errNoContext = errors.New("db: the driver's connection lacks a context method")

// Prepare prepares query renamed.
func (c *renamingConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(c.names.rename(query))
}

// PrepareContext prepares query renamed.
func (c *renamingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	p, ok := c.Conn.(driver.ConnPrepareContext)
	if !ok {
		return c.Prepare(query)
	}
	return p.PrepareContext(ctx, c.names.rename(query))
}

// ExecContext runs query renamed.
func (c *renamingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	return e.ExecContext(ctx, c.names.rename(query), args)
}

// QueryContext runs query renamed.
func (c *renamingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	return q.QueryContext(ctx, c.names.rename(query), args)
}

// BeginTx begins a transaction on the connection.
func (c *renamingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.Conn.(driver.ConnBeginTx)
	if !ok {
		return nil, errNoContext
	}
	return b.BeginTx(ctx, opts)
}

// Ping pings the connection.
func (c *renamingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// ResetSession resets the connection's session.
func (c *renamingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid reports whether the connection may be reused.
func (c *renamingConn) IsValid() bool {
	v, ok := c.Conn.(driver.Validator)
	return !ok || v.IsValid()
}

// CheckNamedValue converts an argument as the connection does.
func (c *renamingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}
