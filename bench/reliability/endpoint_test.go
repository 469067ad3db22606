package reliability

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// delivery is one call an HTTP tool endpoint received.
type delivery struct {
	Run       string          `json:"run"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// endpoint is the HTTP tool endpoint of the test configurations: it records every call, from
// whichever process sends it, and answers {"content":"ok"}.
type endpoint struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []delivery
}

func newEndpoint(t *testing.T) *endpoint {
	e := &endpoint{}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *endpoint) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var d delivery
	if err == nil {
		err = json.Unmarshal(body, &d)
	}
	if err != nil {
		http.Error(w, "bad call", http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.got = append(e.got, d)
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"content":"ok"}`))
}

// forRun returns the calls received for run, oldest first.
func (e *endpoint) forRun(run string) []delivery {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []delivery
	for _, d := range e.got {
		if d.Run == run {
			out = append(out, d)
		}
	}
	return out
}

// sameJSON reports whether a and b hold equal JSON values.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
