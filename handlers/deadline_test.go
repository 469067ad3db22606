package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

func TestRequestDeadline(t *testing.T) {
	t.Parallel()
	var deadline time.Time
	var ok bool
	h := requestDeadline(50 * time.Millisecond)(func(c echo.Context) error {
		deadline, ok = c.Request().Context().Deadline()
		<-c.Request().Context().Done()
		return c.NoContent(http.StatusServiceUnavailable)
	})
	before := time.Now()
	rec := httptest.NewRecorder()
	_ = h(echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec))
	if !ok || deadline.Before(before) || deadline.After(before.Add(time.Minute)) {
		t.Errorf("request context deadline %v (set %v), want about 50ms after %v", deadline, ok, before)
	}
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d", rec.Code)
	}
}
