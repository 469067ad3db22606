package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/db"
	"runsdesk/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func probe(t *testing.T, h echo.HandlerFunc) (int, string) {
	t.Helper()
	e := echo.New()
	e.GET("/p", h)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/p", nil))
	return rec.Code, rec.Body.String()
}

func TestHealthz(t *testing.T) {
	if code, body := probe(t, Healthz); code != http.StatusOK || body != "ok" {
		t.Fatalf("healthz: %d %q", code, body)
	}
}

// TestReadyz on a real database: not migrated ⇒ 503 "migrations pending"; migrated ⇒ 200;
// pool closed ⇒ 503 "database unreachable".
func TestReadyz(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.NewDatabase(t)
	sqlDB, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB.Close() })
	h := Readyz(ReadyConfig{
		Ping:    sqlDB.PingContext,
		Pending: func(ctx context.Context) (int, error) { return db.Pending(ctx, sqlDB) },
	})
	if code, body := probe(t, h); code != http.StatusServiceUnavailable || body != "migrations pending" {
		t.Fatalf("before migrate: %d %q", code, body)
	}
	if err := db.Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	if code, body := probe(t, h); code != http.StatusOK || body != "ready" {
		t.Fatalf("after migrate: %d %q", code, body)
	}
	sqlDB.Close()
	if code, body := probe(t, h); code != http.StatusServiceUnavailable || body != "database unreachable" {
		t.Fatalf("closed pool: %d %q", code, body)
	}
}

// TestReadyzDeadline: a check that hangs is cut off by the timeout and reported unreachable.
func TestReadyzDeadline(t *testing.T) {
	h := Readyz(ReadyConfig{
		Ping:    func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		Pending: func(context.Context) (int, error) { return 0, nil },
		Timeout: 50 * time.Millisecond,
	})
	if code, body := probe(t, h); code != http.StatusServiceUnavailable || body != "database unreachable" {
		t.Fatalf("hung ping: %d %q", code, body)
	}
}
