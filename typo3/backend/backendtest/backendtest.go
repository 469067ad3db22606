// Package backendtest gives tests a TYPO3 12 site's backend account tables: Create makes
// be_users and be_groups exactly as TYPO3 12.4's Database Compare does
// (testdata/typo3_12_be.sql, which names its sources), InsertGroup and InsertUser fill them,
// Hash has PHP hash a password as TYPO3 does, and Snapshot dumps every TYPO3 table so a test
// can prove runsdesk changed nothing in them.
package backendtest

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strings"
	"testing"

	"runsdesk/typo3/phptest"
	"runsdesk/typo3/roles"
)

//go:embed testdata/typo3_12_be.sql
var schema string

// Create makes be_groups and be_users on db, failing tb on error.
func Create(tb testing.TB, db *sql.DB) {
	tb.Helper()
	if err := CreateTables(context.Background(), db); err != nil {
		tb.Fatal(err)
	}
}

// CreateTables makes be_groups and be_users on db: Create outside a test (the benches).
func CreateTables(ctx context.Context, db *sql.DB) error {
	for _, stmt := range statements(schema) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("backendtest: create the TYPO3 12 tables: %w", err)
		}
	}
	return nil
}

// statements splits a schema file into its statements: "--" comment lines dropped, split
// at a ";" that ends a line.
func statements(file string) []string {
	var kept []string
	for _, line := range strings.Split(file, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			kept = append(kept, line)
		}
	}
	var stmts []string
	for _, stmt := range strings.Split(strings.Join(kept, "\n"), ";\n") {
		if stmt = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmt), ";")); stmt != "" {
			stmts = append(stmts, stmt)
		}
	}
	return stmts
}

// InsertGroup adds a be_groups row (with UID when it is not zero) and returns its uid.
func InsertGroup(tb testing.TB, db *sql.DB, g roles.Group) int64 {
	tb.Helper()
	res, err := db.ExecContext(context.Background(),
		"INSERT INTO be_groups (uid, title, subgroup, hidden, deleted) VALUES (NULLIF(?, 0), ?, ?, ?, ?)",
		g.UID, g.Title, g.Subgroups, g.Hidden, g.Deleted)
	if err != nil {
		tb.Fatalf("backendtest: insert be_groups row %q: %v", g.Title, err)
	}
	return lastID(tb, res)
}

// User is a be_users row to insert: the columns runsdesk reads. UserGroups is the usergroup
// comma list; StartTime and EndTime are Unix seconds (0 for none); Admin is the admin column;
// MFA is the raw mfa column, NULL when MFA is nil.
type User struct {
	UID        int64
	Username   string
	Password   string
	RealName   string
	Email      string
	Admin      int
	UserGroups string
	Disable    bool
	Deleted    bool
	StartTime  int64
	EndTime    int64
	MFA        []byte
}

// InsertUser adds a be_users row (with UID when it is not zero) and returns its uid.
func InsertUser(tb testing.TB, db *sql.DB, u User) int64 {
	tb.Helper()
	res, err := db.ExecContext(context.Background(),
		`INSERT INTO be_users (uid, username, password, realName, email, admin, usergroup, disable, deleted, starttime, endtime, mfa)
		 VALUES (NULLIF(?, 0), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.UID, u.Username, u.Password, u.RealName, u.Email, u.Admin, u.UserGroups, u.Disable, u.Deleted,
		u.StartTime, u.EndTime, u.MFA)
	if err != nil {
		tb.Fatalf("backendtest: insert be_users row %q: %v", u.Username, err)
	}
	return lastID(tb, res)
}

func lastID(tb testing.TB, res sql.Result) int64 {
	tb.Helper()
	id, err := res.LastInsertId()
	if err != nil {
		tb.Fatalf("backendtest: insert id: %v", err)
	}
	return id
}

// Format is a password hash format TYPO3 12 writes.
type Format string

// The formats Hash makes, each as TYPO3 12's password hash class of that name makes it.
const (
	// Argon2i is what Argon2iPasswordHash, TYPO3 12's default, writes, at PHP's default costs
	// (64 MiB, t = 4, one thread; TYPO3 raises t to 16, which only makes tests slower).
	Argon2i Format = "argon2i"
	// Argon2id is Argon2idPasswordHash at the same costs.
	Argon2id Format = "argon2id"
	// Bcrypt is BcryptPasswordHash at its default cost 12: bcrypt of base64(SHA-384(password)).
	Bcrypt Format = "bcrypt"
	// BcryptFast is BcryptPasswordHash at cost 10, the lowest TYPO3 allows: for tests that
	// sign in often.
	BcryptFast Format = "bcrypt-fast"
)

// phpHash holds, per format, the PHP expression hashing $pw as TYPO3's class does.
var phpHash = map[Format]string{
	Argon2i:    `password_hash($pw, PASSWORD_ARGON2I)`,
	Argon2id:   `password_hash($pw, PASSWORD_ARGON2ID)`,
	Bcrypt:     `password_hash(base64_encode(hash('sha384', $pw, true)), PASSWORD_BCRYPT, ['cost' => 12])`,
	BcryptFast: `password_hash(base64_encode(hash('sha384', $pw, true)), PASSWORD_BCRYPT, ['cost' => 10])`,
}

// Hash returns password hashed by PHP in format. Without php it skips tb, or fails it when
// CI or RUNSDESK_REQUIRE_PHP is set (package runsdesk/typo3/phptest).
func Hash(tb testing.TB, format Format, password string) string {
	tb.Helper()
	expr, ok := phpHash[format]
	if !ok {
		tb.Fatalf("backendtest: unknown hash format %q", format)
	}
	return strings.TrimSpace(phptest.Run(tb, `$pw = stream_get_contents(STDIN); echo `+expr+`;`, password))
}

// Snapshot returns the definition (SHOW CREATE TABLE, with its next AUTO_INCREMENT) and every
// row, every column, ordered by uid, of each TYPO3 table on db: be_groups, be_users and the
// nr-llm extension's tx_nrllm_* tables present. Equal snapshots mean nothing was added,
// altered or deleted in them.
func Snapshot(tb testing.TB, db *sql.DB) string {
	tb.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, table := range siteTables(tb, db) {
		var name, create string
		if err := db.QueryRowContext(ctx, "SHOW CREATE TABLE "+table).Scan(&name, &create); err != nil {
			tb.Fatalf("backendtest: show create table %s: %v", table, err)
		}
		b.WriteString(create + "\n")
		rows, err := db.QueryContext(ctx, "SELECT * FROM "+table+" ORDER BY uid")
		if err != nil {
			tb.Fatalf("backendtest: dump %s: %v", table, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			tb.Fatalf("backendtest: dump %s: %v", table, err)
		}
		values := make([]sql.RawBytes, len(cols))
		dest := make([]any, len(cols))
		for i := range values {
			dest[i] = &values[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				tb.Fatalf("backendtest: dump %s: %v", table, err)
			}
			for i, v := range values {
				if v == nil {
					fmt.Fprintf(&b, "%s=NULL ", cols[i])
				} else {
					fmt.Fprintf(&b, "%s=%q ", cols[i], v)
				}
			}
			b.WriteString("\n")
		}
		if err := rows.Err(); err != nil {
			tb.Fatalf("backendtest: dump %s: %v", table, err)
		}
		_ = rows.Close()
	}
	return b.String()
}

// siteTables lists, sorted, the TYPO3 tables on db: be_groups, be_users and tx_nrllm_*.
func siteTables(tb testing.TB, db *sql.DB) []string {
	tb.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT table_name FROM information_schema.tables
		WHERE table_schema = DATABASE() AND (table_name IN ('be_groups', 'be_users') OR table_name LIKE 'tx\\_nrllm\\_%')
		ORDER BY table_name`)
	if err != nil {
		tb.Fatalf("backendtest: list the TYPO3 tables: %v", err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			tb.Fatalf("backendtest: list the TYPO3 tables: %v", err)
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("backendtest: list the TYPO3 tables: %v", err)
	}
	return tables
}
