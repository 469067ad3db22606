package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"runsdesk/db/dbtest"
	"runsdesk/handlers/api/apitest"
	"runsdesk/internal/testdb"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// migratedDB returns a pool on a fresh, migrated database, closed when the test ends.
func migratedDB(t *testing.T) *sql.DB {
	t.Helper()
	pool, _ := testdb.New(t)
	return pool
}

// checkedClient is an HTTP client whose calls to the API are checked against its OpenAPI
// document (apitest).
func checkedClient(t *testing.T) *http.Client {
	return &http.Client{Transport: apitest.New().Transport(t, nil)}
}

// get fetches url and returns the status and the JSON error code of the answer, if any.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := checkedClient(t).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body.Error.Code
}

// TestNewGatesPagesAndAPI fills the application's only admission slot: the pages and the JSON
// API wait for it and answer 503 at the request's deadline, the bare routes answer at once,
// and a freed slot serves the next request.
func TestNewGatesPagesAndAPI(t *testing.T) {
	a, err := New(context.Background(), Config{DB: migratedDB(t), MaxInFlight: 1, RequestTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	release, err := a.Gate.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const run = "/api/v1/runs/00000000-0000-4000-8000-000000000000"
	if status, code := get(t, srv.URL+run); status != http.StatusServiceUnavailable || code != "unavailable" {
		t.Errorf("API GET with the only slot taken: %d %q, want 503 unavailable", status, code)
	}
	if status, _ := get(t, srv.URL+"/login"); status != http.StatusServiceUnavailable {
		t.Errorf("GET /login with the only slot taken: %d, want 503", status)
	}
	if status, _ := get(t, srv.URL+"/healthz"); status != http.StatusOK {
		t.Errorf("GET /healthz with the only slot taken: %d, want 200 (not gated)", status)
	}
	release()
	if status, code := get(t, srv.URL+run); status != http.StatusUnauthorized {
		t.Errorf("API GET without a token, slot free: %d %q, want 401", status, code)
	}
	if status, _ := get(t, srv.URL+"/login"); status != http.StatusOK {
		t.Errorf("GET /login, slot free: %d, want 200", status)
	}
}

// TestNewWithoutGate builds no gate for a negative MaxInFlight: every route answers at once.
func TestNewWithoutGate(t *testing.T) {
	a, err := New(context.Background(), Config{DB: migratedDB(t), MaxInFlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	if a.Gate != nil {
		t.Fatalf("MaxInFlight -1 built a gate")
	}
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	if status, _ := get(t, srv.URL+"/login"); status != http.StatusOK {
		t.Errorf("GET /login: %d, want 200", status)
	}
}

// TestServeUsesTheServerLimits checks that the server Serve runs has the limits of every
// phase of a request (an oversized header is refused with 431), and that Close stops it.
func TestServeUsesTheServerLimits(t *testing.T) {
	a, err := New(context.Background(), Config{DB: migratedDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	s := a.srv
	if s.ReadHeaderTimeout != ReadHeaderTimeout || s.ReadTimeout != ReadTimeout || s.WriteTimeout != WriteTimeout ||
		s.IdleTimeout != IdleTimeout || s.MaxHeaderBytes != MaxHeaderBytes || s.Handler == nil {
		t.Errorf("server limits %v %v %v %v %d, want %v %v %v %v %d", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout,
			s.IdleTimeout, s.MaxHeaderBytes, ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout, MaxHeaderBytes)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	if status, _ := get(t, base+"/healthz"); status != http.StatusOK {
		t.Errorf("GET /healthz: %d", status)
	}
	req, err := http.NewRequest(http.MethodGet, base+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("x", 2*MaxHeaderBytes))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("GET /healthz with a %d-byte header: %d, want 431", 2*MaxHeaderBytes, res.StatusCode)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Errorf("Serve after Close returned %v, want http.ErrServerClosed", err)
	}
}
