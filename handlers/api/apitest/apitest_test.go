package apitest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"runsdesk/handlers/api/apitest"
)

// recorder is a testing.TB that keeps what the checker reports instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

const queueJSON = `{"as_of":1,"percentiles_approximate":true,"bucket_bounds_seconds":[10],"rows":[]}`

// answer is what the fake server answers one path with.
type answer struct {
	status      int
	contentType string
	body        string
}

// TestCheckerJudgesExchanges: the checker passes documented exchanges and reports a response
// with an undocumented field, a request the document refuses that the server accepted, an
// error code the operation does not list, and a path the document lacks answered other than
// 404; the caller still reads the whole body, and a stream is not read.
func TestCheckerJudgesExchanges(t *testing.T) {
	answers := map[string]answer{
		"GET /api/v1/queue":        {200, "application/json", queueJSON},
		"GET /api/v1/queue?extra":  {200, "application/json", strings.Replace(queueJSON, `"rows":[]`, `"rows":[],"extra":1`, 1)},
		"POST /api/v1/runs":        {201, "application/json", ""},
		"GET /api/v1/runs/x":       {404, "application/json", `{"error":{"code":"not_found","message":"no"}}`},
		"GET /api/v1/runs/y":       {404, "application/json", `{"error":{"code":"run_not_found","message":"no such run"}}`},
		"GET /api/v1/nowhere":      {404, "application/json", `{"error":{"code":"not_found","message":"no"}}`},
		"GET /api/v1/nowhere/else": {200, "application/json", `{}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/events" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		key := r.Method + " " + r.URL.Path
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		a, ok := answers[key]
		if !ok {
			t.Errorf("unexpected %s", key)
			return
		}
		w.Header().Set("Content-Type", a.contentType)
		w.Header().Set("X-Request-Id", "r1")
		if a.status == http.StatusCreated {
			w.Header().Set("Location", "/api/v1/runs/u")
			a.body = `{"uuid":"u"}`
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	defer srv.Close()

	cases := []struct {
		method, path, body string
		reported           string
	}{
		{"GET", "/api/v1/queue", "", ""},
		{"GET", "/api/v1/queue?extra", "", "does not match operation getQueueHealth"},
		{"POST", "/api/v1/runs", `{"configuration":"c"}`, "the server answered 201 to a request the OpenAPI document refuses"},
		{"GET", "/api/v1/runs/x", "", "answered 404 not_found, which its x-error-codes do not list"},
		{"GET", "/api/v1/runs/y", "", ""},
		{"GET", "/api/v1/nowhere", "", ""},
		{"GET", "/api/v1/nowhere/else", "", "the document has no path"},
	}
	for _, tc := range cases {
		rec := &recorder{TB: t}
		client := &http.Client{Transport: apitest.New().Transport(rec, nil)}
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer t")
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil || len(got) == 0 {
			t.Errorf("%s %s: the caller read %q, %v; want the whole body", tc.method, tc.path, got, err)
		}
		errs := rec.reported()
		switch {
		case tc.reported == "" && len(errs) > 0:
			t.Errorf("%s %s: reported %q, want nothing", tc.method, tc.path, errs)
		case tc.reported != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.reported)):
			t.Errorf("%s %s: reported %q, want one report with %q", tc.method, tc.path, errs, tc.reported)
		}
	}

	rec := &recorder{TB: t}
	client := &http.Client{Transport: apitest.New().Transport(rec, nil)}
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if errs := rec.reported(); res.StatusCode != http.StatusOK || len(errs) > 0 {
		t.Errorf("event stream: %d, reported %q; want 200 and nothing", res.StatusCode, errs)
	}
}

// TestCheckerLeavesOtherPathsAlone: a path outside /api/v1 is neither read nor checked.
func TestCheckerLeavesOtherPathsAlone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<html>")
	}))
	defer srv.Close()
	rec := &recorder{TB: t}
	res, err := (&http.Client{Transport: apitest.New().Transport(rec, nil)}).Get(srv.URL + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if errs := rec.reported(); len(errs) > 0 {
		t.Errorf("reported %q for a page", errs)
	}
}
