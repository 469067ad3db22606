package db

import (
	"testing"

	"runsdesk/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func newDatabase(t testing.TB) string {
	t.Helper()
	return dbtest.NewDatabase(t)
}
