package testdb_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"runsdesk/db/dbtest"
	"runsdesk/internal/testdb"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestCopiedDatabaseIsTheMigratedOne compares the first database of the binary (migrated) with
// a later one (its copy): the same columns, keys, table options and rows.
func TestCopiedDatabaseIsTheMigratedOne(t *testing.T) {
	migrated, _ := testdb.New(t)
	copied, _ := testdb.New(t)
	queries := map[string]string{
		"columns": `SELECT table_name, column_name, ordinal_position, column_default, is_nullable, column_type,
			collation_name, column_key, extra FROM information_schema.columns WHERE table_schema = DATABASE()`,
		"keys": `SELECT table_name, index_name, non_unique, seq_in_index, column_name, sub_part, index_type
			FROM information_schema.statistics WHERE table_schema = DATABASE()`,
		"tables": `SELECT table_name, engine, row_format, table_collation, create_options
			FROM information_schema.tables WHERE table_schema = DATABASE()`,
		"migrations": `SELECT * FROM schema_migrations`,
	}
	for name, q := range queries {
		want, got := dump(t, migrated, q), dump(t, copied, q)
		if len(want) == 0 || !slices.Equal(want, got) {
			t.Errorf("%s differ:\nmigrated %q\ncopied   %q", name, want, got)
		}
	}
}

// dump runs q and returns its rows as sorted strings.
func dump(t *testing.T, pool *sql.DB, q string) []string {
	t.Helper()
	rows, err := pool.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		raw := make([]sql.RawBytes, len(cols))
		dest := make([]any, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		line := ""
		for _, v := range raw {
			line += string(v) + "|"
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}
