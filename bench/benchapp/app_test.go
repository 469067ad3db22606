package benchapp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
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

// TestStartBesideTYPO3 builds a small inbox desk beside a TYPO3 site (benchenv's TYPO3 desk)
// and serves it as serve --typo3 does: the bench admin signs in and the inbox lists runsdesk's
// waiting runs from tx_runsdesk_run, none of the extension's from the site's tx_nrllm_agentrun,
// which holds as many runs, waiting ones among them.
func TestStartBesideTYPO3(t *testing.T) {
	ctx := context.Background()
	env, err := benchenv.Start(ctx, benchenv.Options{DSN: dbtest.NewDatabase(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	desk, err := env.Desk(ctx, benchenv.DeskOptions{Kind: benchenv.KindInbox, Runs: 300, Fresh: true, TYPO3: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.Admin().ExecContext(ctx, "DROP DATABASE "+desk.Name) })
	if desk.Site.Runs != 300 || desk.Site.Approval+desk.Site.Input != 30 {
		t.Fatalf("the site holds %+v, want 300 extension runs, 30 waiting", desk.Site)
	}
	a, err := benchapp.Start(ctx, benchapp.Options{DSN: desk.DSN, TYPO3: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	site, err := db.Open(ctx, desk.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { site.Close() })
	var own, extension string
	if err := a.Pool.QueryRowContext(ctx, `SELECT uuid FROM tx_nrllm_agentrun WHERE suspended_at > 0 ORDER BY suspended_at, uid LIMIT 1`).Scan(&own); err != nil {
		t.Fatal(err)
	}
	if err := site.QueryRowContext(ctx, `SELECT uuid FROM tx_nrllm_agentrun WHERE status LIKE 'waiting%' ORDER BY crdate, uid LIMIT 1`).Scan(&extension); err != nil {
		t.Fatal(err)
	}
	clients, err := benchapp.SignIn(ctx, []string{a.URL}, 1)
	if err != nil {
		t.Fatal(err)
	}
	status, body, err := clients[0].Get(ctx, "/runs")
	if err != nil || status != http.StatusOK {
		t.Fatalf("GET /runs: %d, %v", status, err)
	}
	if !strings.Contains(string(body), own) {
		t.Errorf("the inbox does not list runsdesk's waiting run %s", own)
	}
	if strings.Contains(string(body), extension) {
		t.Errorf("the inbox lists the extension's run %s from the site's table", extension)
	}
}
