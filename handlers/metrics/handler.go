package metrics

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// TextContentType is the Content-Type of the exposition served to a scraper that sends no
// Accept header: the Prometheus text format 0.0.4, metric names escaped to underscores.
const TextContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// Handler serves the exposition at /metrics with promhttp (the format negotiated from the
// Accept header, TextContentType by default) and 200. The Source's families come from the
// snapshot, refreshed first when it is older than Config.Interval (waiting at most until the
// request's context ends, then serving the previous one); a failing Source query is counted
// and keeps the previous snapshot, it does not fail the scrape. Mount it behind LoopbackOnly
// or an admin check.
func (m *Metrics) Handler() echo.HandlerFunc {
	return func(c echo.Context) error {
		if m.snaps != nil {
			m.snaps.await(c.Request().Context())
		}
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		m.exposer.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

// Middleware records every request in runsdesk_http_request_duration_seconds, labelled with
// the matched route pattern (c.Path(), never the raw URL; "unmatched" when no route matched),
// the method (non-standard methods as "OTHER") and the status code. Install it with e.Use, so
// that routing has happened and c.Path() is set. When the handler returns an error, the code
// is that of an *echo.HTTPError, else errStatus(err) when set, else 500.
func (m *Metrics) Middleware(errStatus func(error) int) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			code := statusOf(c, err, errStatus)
			m.http.WithLabelValues(routeLabel(c.Path()), methodLabel(c.Request().Method), strconv.Itoa(code)).
				Observe(time.Since(start).Seconds())
			return err
		}
	}
}

func statusOf(c echo.Context, err error, errStatus func(error) int) int {
	if err == nil || c.Response().Committed {
		return c.Response().Status
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	if errStatus != nil {
		return errStatus(err)
	}
	return http.StatusInternalServerError
}

func routeLabel(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	return pattern
}

func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// LoopbackOnly admits a request only when its TCP peer (RemoteAddr, not a header) is a
// loopback address and it carries no Forwarded, X-Forwarded-For or X-Real-Ip header, which a
// reverse proxy on the same host would add; anything else gets echo.ErrNotFound, so the
// endpoint is not advertised.
func LoopbackOnly() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.Header.Get("Forwarded") != "" || r.Header.Get(echo.HeaderXForwardedFor) != "" || r.Header.Get(echo.HeaderXRealIP) != "" {
				return echo.ErrNotFound
			}
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				host = r.RemoteAddr
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return echo.ErrNotFound
			}
			return next(c)
		}
	}
}
