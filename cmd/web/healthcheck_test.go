package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHealthURL: healthcheck asks the listen address's host, a wildcard one on loopback, and
// refuses an address with no port to ask.
func TestHealthURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1:8080":   "http://127.0.0.1:8080/healthz",
		"0.0.0.0:8080":     "http://127.0.0.1:8080/healthz",
		":8080":            "http://127.0.0.1:8080/healthz",
		"[::]:8080":        "http://127.0.0.1:8080/healthz",
		"[::1]:9000":       "http://[::1]:9000/healthz",
		"desk.internal:80": "http://desk.internal:80/healthz",
	} {
		if got, err := healthURL(addr); err != nil || got != want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	for _, addr := range []string{"127.0.0.1", "127.0.0.1:0", "localhost:"} {
		if got, err := healthURL(addr); err == nil {
			t.Errorf("healthURL(%q) = %q, want an error", addr, got)
		}
	}
}

// TestHealthcheckAnswers: healthcheck exits 0 on a 200 from /healthz (its address from
// RUNSDESK_ADDR, a wildcard one asked on loopback) and 1 with a one-line reason on another
// status, a closed port or no answer within --timeout; a bad --timeout is a usage error.
func TestHealthcheckAnswers(t *testing.T) {
	t.Parallel()
	var status atomic.Int32
	status.Store(http.StatusOK)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/healthz":
			http.NotFound(w, r)
		case status.Load() == http.StatusTeapot:
			<-release
		default:
			w.WriteHeader(int(status.Load()))
		}
	}))
	defer srv.Close()
	defer close(release)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	r := cliRun(t, environ{"RUNSDESK_ADDR": "0.0.0.0:" + port}, nil, "healthcheck")
	if r.code != exitOK || !strings.Contains(r.stdout, "ok: http://127.0.0.1:"+port+"/healthz answered 200") {
		t.Errorf("healthy: %+v", r)
	}
	status.Store(http.StatusServiceUnavailable)
	r = cliRun(t, nil, nil, "healthcheck", "--addr", "127.0.0.1:"+port)
	if r.code != exitFailure || r.stderr != "runsdesk healthcheck: GET http://127.0.0.1:"+port+"/healthz answered 503 Service Unavailable\n" {
		t.Errorf("503: %+v", r)
	}
	status.Store(http.StatusTeapot) // held until the test ends
	began := time.Now()
	r = cliRun(t, environ{"RUNSDESK_HEALTHCHECK_TIMEOUT": "300ms"}, nil, "healthcheck", "--addr", ":"+port)
	if r.code != exitFailure || !strings.Contains(r.stderr, "(timeout 300ms)") || strings.Count(r.stderr, "\n") != 1 || time.Since(began) > 10*time.Second {
		t.Errorf("no answer: %+v after %s", r, time.Since(began))
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close()
	if r := cliRun(t, nil, nil, "healthcheck", "--addr", addr); r.code != exitFailure || !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("closed port: %+v", r)
	}
	for _, args := range [][]string{{"--timeout", "0s"}, {"--addr", "nowhere"}, {"now"}} {
		if r := cliRun(t, nil, nil, append([]string{"healthcheck"}, args...)...); r.code != exitUsage {
			t.Errorf("healthcheck %v: %+v", args, r)
		}
	}
}
