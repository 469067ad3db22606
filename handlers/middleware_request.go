package handlers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// requestID gives every request a fresh random id, in the context and the X-Request-ID
// response header. A client-sent X-Request-ID is ignored, so log lines cannot be forged.
func (h *Handlers) requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id := hex.EncodeToString(b)
		c.Set(ctxRequestID, id)
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

// requestDeadline gives every request's context a deadline d (none when d is 0), so that a
// database that hangs (a stopped server, a full connection pool) fails the request with an
// honest 503 when d has passed instead of holding it for as long as the hang lasts.
func requestDeadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if d <= 0 {
			return next
		}
		return func(c echo.Context) error {
			r := c.Request()
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			c.SetRequest(r.WithContext(ctx))
			return next(c)
		}
	}
}

// retryAfterUnavailable is the Retry-After, in seconds, of every 503: a busy queue or an
// unreachable database usually recovers within it.
const retryAfterUnavailable = "5"

// retryWhenUnavailable gives every 503 the router answers (pages, API, /readyz, the session
// store's) a Retry-After header, unless its handler set one.
func retryWhenUnavailable(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		res := c.Response()
		res.Before(func() {
			if res.Status == http.StatusServiceUnavailable && res.Header().Get(echo.HeaderRetryAfter) == "" {
				res.Header().Set(echo.HeaderRetryAfter, retryAfterUnavailable)
			}
		})
		return next(c)
	}
}

// accessLog renders any error of the chain, then (unless Config.NoAccessLog) logs one line per
// request: id, method, route, path (never the query), status, size, duration, client address
// and user uid. It never logs headers, cookies, tokens or form values.
func (h *Handlers) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		if h.quiet {
			return nil
		}
		res := c.Response()
		attrs := []slog.Attr{
			slog.String("request_id", requestID(c)),
			slog.String("method", c.Request().Method),
			slog.String("route", c.Path()),
			slog.String("path", c.Request().URL.Path),
			slog.Int("status", res.Status),
			slog.Int64("bytes", res.Size),
			slog.Int64("duration_ms", time.Since(start).Milliseconds()),
			slog.String("ip", c.RealIP()),
		}
		if a := h.actor(c); a.UserUID > 0 {
			attrs = append(attrs, slog.Int64("user", a.UserUID))
		} else if a.Name != "" {
			attrs = append(attrs, slog.String("service_account", a.Name))
		}
		h.log.LogAttrs(c.Request().Context(), slog.LevelInfo, "request", attrs...)
		return nil
	}
}

// recoverPanic turns a panic into a generic 500; the stack goes to the log only.
func (h *Handlers) recoverPanic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		return callSafely(c, h.log, next)
	}
}

// callSafely runs next and returns a panic as an error (http.ErrAbortHandler is re-raised, as
// net/http expects).
func callSafely(c echo.Context, log *slog.Logger, next echo.HandlerFunc) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if r == http.ErrAbortHandler {
			panic(r)
		}
		log.ErrorContext(c.Request().Context(), "panic", "request_id", requestID(c),
			"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		err = errors.New("handler panicked")
	}()
	return next(c)
}

// securityHeaders sets the headers every response carries (ASVS V3.4): a strict CSP without
// inline script or style, nosniff, no framing, same-origin referrers, HSTS when served over
// TLS, and Cache-Control: no-store unless a handler (static assets) overrides it.
func (h *Handlers) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		hd := c.Response().Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; object-src 'none'; base-uri 'none'; "+
			"frame-ancestors 'none'; form-action 'self'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		hd.Set(echo.HeaderCacheControl, "no-store")
		if h.secure {
			hd.Set("Strict-Transport-Security", "max-age="+strconv.Itoa(365*24*3600)+"; includeSubDomains")
		}
		return next(c)
	}
}

// refuseTrace answers TRACE and CONNECT with 405 on every path.
func refuseTrace(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if m := c.Request().Method; m == http.MethodTrace || m == http.MethodConnect {
			return echo.ErrMethodNotAllowed
		}
		return next(c)
	}
}

// bodyLimit refuses request bodies over limit bytes with 413: at once by Content-Length,
// otherwise when reading passes the limit (see bodyReadError).
func bodyLimit(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > limit {
				return echo.ErrStatusRequestEntityTooLarge
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
			return next(c)
		}
	}
}

// bodyReadError maps an error from reading or parsing a request body to the response: 413 when
// the body passed the limit, else 400.
func bodyReadError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return echo.ErrStatusRequestEntityTooLarge
	}
	return publicError(http.StatusBadRequest, "bad_request", "The form could not be read.")
}

// crossOrigin refuses state-changing requests sent by a browser from another origin
// (Sec-Fetch-Site, else Origin against Host), before any session or handler runs.
func (h *Handlers) crossOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.origins.Check(c.Request()); err != nil {
			h.audit(c, actionCrossOrigin, outcomeDenied, c.Request().Method+" "+c.Path())
			return publicError(http.StatusForbidden, "cross_origin",
				"This request came from another site and was refused.")
		}
		return next(c)
	}
}
