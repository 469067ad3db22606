package benchapp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/db"
	"runsdesk/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestBenchAPIWaitsForTheAdmissionGate fills the bench app's only admission slot and checks
// that the JSON API, like the pages, waits for it and answers 503 "unavailable" at its
// deadline, as under serve: the benchmarks measure the gate serve runs.
func TestBenchAPIWaitsForTheAdmissionGate(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.NewDatabase(t)
	if err := db.Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	a, err := benchapp.Start(ctx, benchapp.Options{DSN: dsn, MaxInFlight: 1, RequestTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	release, err := a.Gate.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body.Error.Code
	}
	const run = "/api/v1/runs/00000000-0000-4000-8000-000000000000"
	if status, code := get(run); status != http.StatusServiceUnavailable || code != "unavailable" {
		t.Errorf("API GET with the only slot taken: %d %q, want 503 unavailable (the API must wait for the gate)", status, code)
	}
	if status, _ := get("/login"); status != http.StatusServiceUnavailable {
		t.Errorf("GET /login with the only slot taken: %d, want 503", status)
	}
	release()
	if status, code := get(run); status != http.StatusUnauthorized {
		t.Errorf("API GET without a token, slot free: %d %q, want 401", status, code)
	}
}
