package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// BenchmarkMiddleware measures what the metrics middleware adds to every request: timing it
// and observing runsdesk_http_request_duration_seconds, around a handler that does nothing.
func BenchmarkMiddleware(b *testing.B) {
	m := New(Config{})
	h := m.Middleware(nil)(func(echo.Context) error { return nil })
	e := echo.New()
	b.Run("serial", func(b *testing.B) {
		c := e.NewContext(httptest.NewRequest(http.MethodGet, "/runs/x", nil), httptest.NewRecorder())
		c.SetPath("/runs/:uuid")
		b.ReportAllocs()
		for b.Loop() {
			_ = h(c)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			c := e.NewContext(httptest.NewRequest(http.MethodGet, "/runs/x", nil), httptest.NewRecorder())
			c.SetPath("/runs/:uuid")
			for pb.Next() {
				_ = h(c)
			}
		})
	})
}
