package app

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestRequestDeadline(t *testing.T) {
	var deadline time.Time
	var ok bool
	h := withRequestDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline, ok = r.Context().Deadline()
		<-r.Context().Done()
		w.WriteHeader(http.StatusServiceUnavailable)
	}), 50*time.Millisecond)
	before := time.Now()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if !ok || deadline.Before(before) || deadline.After(before.Add(time.Minute)) {
		t.Errorf("request context deadline %v (set %v), want about 50ms after %v", deadline, ok, before)
	}
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d", rec.Code)
	}
}
