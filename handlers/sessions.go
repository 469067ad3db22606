package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// Keys of the values runsdesk keeps in a session; sessionIndexID is the random id of the
// session's row in the session index.
const (
	sessionUID     = "uid"
	sessionEpoch   = "epoch"
	sessionCSRF    = "csrf"
	sessionIndexID = "sid"
)

// sessionSeenEvery is how often a session's last request is written to the session index at
// most; the index keeps a row this much longer than the session could live.
const sessionSeenEvery = time.Minute

// maxUserAgent bounds the User-Agent the session index keeps (bytes).
const maxUserAgent = 255

// Session cookie names: __Host- (Secure, Path=/, no Domain) whenever cookies are Secure.
const (
	cookieSecure   = "__Host-runsdesk"
	cookieInsecure = "runsdesk_session"
)

// NewSessionManager returns a session manager on store (db.SessionStore in production) with
// runsdesk's limits: 30 minutes idle, 12 hours absolute, and a codec that encodes an unchanged
// session to the same bytes (so db.SessionStore skips rewriting it on every page view). New
// applies the cookie policy.
func NewSessionManager(store scs.Store) *scs.SessionManager {
	sm := scs.New()
	sm.Store = store
	sm.Codec = sessionCodec{}
	sm.IdleTimeout = DefaultIdleTimeout
	sm.Lifetime = DefaultLifetime
	return sm
}

func (h *Handlers) applySessionPolicy() error {
	sm := h.sessions
	if sm.IdleTimeout <= 0 || sm.IdleTimeout > DefaultIdleTimeout {
		return fmt.Errorf("handlers: session IdleTimeout %s must be in (0, %s]", sm.IdleTimeout, DefaultIdleTimeout)
	}
	if sm.Lifetime <= 0 || sm.Lifetime > DefaultLifetime {
		return fmt.Errorf("handlers: session Lifetime %s must be in (0, %s]", sm.Lifetime, DefaultLifetime)
	}
	sm.Cookie.Name = cookieInsecure
	if h.secure {
		sm.Cookie.Name = cookieSecure
	}
	sm.Cookie.Secure = h.secure
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Path = "/"
	sm.Cookie.Domain = ""
	sm.Cookie.Persist = false
	sm.HashTokenInStore = true
	sm.ErrorFunc = h.sessionStoreFailed
	return nil
}

// withSession loads the session around the rest of the chain and commits it afterwards. Errors
// and panics of the rest of the chain are rendered inside, so the session is committed once,
// before the response is written.
func (h *Handlers) withSession(next echo.HandlerFunc) echo.HandlerFunc {
	inner := func(c echo.Context) error {
		c.Set(ctxSession, true)
		if err := callSafely(c, h.log, next); err != nil {
			c.Error(err)
		}
		return nil
	}
	return echo.WrapMiddleware(h.sessions.LoadAndSave)(inner)
}

// sessionStoreFailed answers 503 when the session store cannot be read or written: without a
// session nobody can be recognised, so the request fails closed. The page goes out whole with
// its own Content-Length, replacing one the handler may have set before the session's commit
// failed; what the handler writes after it is refused as beyond that length.
func (h *Handlers) sessionStoreFailed(w http.ResponseWriter, r *http.Request, err error) {
	id := w.Header().Get(echo.HeaderXRequestID)
	h.log.ErrorContext(r.Context(), "session store failed", "request_id", id, "error", err)
	page := views.Page{Title: "Temporarily unavailable", Assets: h.assetPaths(), RequestID: id}
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	_ = views.ErrorPage(page, views.ErrorView{Status: http.StatusServiceUnavailable,
		Title: "Temporarily unavailable", Text: statusText(http.StatusServiceUnavailable), RequestID: id}).
		Render(r.Context(), buf)
	w.Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	w.Header().Set(echo.HeaderContentLength, strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(buf.Bytes())
}

// startSession gives a person who just proved who they are a fresh session: a new token (the
// old one, possibly planted, stops working), their uid and session epoch, a new CSRF token,
// and a new row in the session index (replacing the browser's earlier one).
func (h *Handlers) startSession(c echo.Context, actor runtime.Actor, epoch int64) error {
	ctx := c.Request().Context()
	if err := h.index.Forget(ctx, h.sessions.GetString(ctx, sessionIndexID)); err != nil {
		return err
	}
	if err := h.sessions.RenewToken(ctx); err != nil {
		return fmt.Errorf("renew session: %w", err)
	}
	now := h.now()
	id := newToken()
	if err := h.index.Start(ctx, runtime.Session{ID: id, UserUID: actor.UserUID, Epoch: epoch, Created: now.Unix(),
		LastSeen: now.Unix(), Expires: h.sessionExpiry(now, now), IP: c.RealIP(), UserAgent: userAgent(c)}); err != nil {
		return err
	}
	h.sessions.Put(ctx, sessionUID, actor.UserUID)
	h.sessions.Put(ctx, sessionEpoch, epoch)
	h.sessions.Put(ctx, sessionIndexID, id)
	h.sessions.Put(ctx, sessionCSRF, newToken())
	setActor(c, actor)
	return nil
}

// endSession ends the request's session on the server: its row leaves the session index and
// the session is destroyed (its cookie stops working everywhere).
func (h *Handlers) endSession(ctx context.Context) error {
	if err := h.index.Forget(ctx, h.sessions.GetString(ctx, sessionIndexID)); err != nil {
		return err
	}
	return h.sessions.Destroy(ctx)
}

// touchSession writes the request as the last one of its session-index row s when
// sessionSeenEvery has passed since the row's last one.
func (h *Handlers) touchSession(c echo.Context, s runtime.Session) error {
	now := h.now()
	due := now.Add(-sessionSeenEvery).Unix()
	if s.LastSeen > due {
		return nil
	}
	return h.index.Touch(c.Request().Context(), s.ID, now.Unix(), due+1, c.RealIP(), h.sessionExpiry(time.Unix(s.Created, 0), now))
}

// sessionExpiry is when the session index may forget a session signed in at created and last
// used at seen: its idle timeout or absolute lifetime, whichever is first, plus
// sessionSeenEvery (the last request written may be that much older than the last one).
func (h *Handlers) sessionExpiry(created, seen time.Time) int64 {
	end := min(created.Add(h.sessions.Lifetime).Unix(), seen.Add(h.sessions.IdleTimeout).Unix())
	return end + int64(sessionSeenEvery/time.Second)
}

// userAgent is the request's User-Agent as the session index keeps it: valid UTF-8, at most
// maxUserAgent bytes.
func userAgent(c echo.Context) string {
	return truncate(strings.ToValidUTF8(c.Request().UserAgent(), "\uFFFD"), maxUserAgent)
}

// csrfToken returns the session's CSRF token, creating one (and so the session) if needed.
func (h *Handlers) csrfToken(c echo.Context) string {
	ctx := c.Request().Context()
	if t := h.sessions.GetString(ctx, sessionCSRF); t != "" {
		return t
	}
	t := newToken()
	h.sessions.Put(ctx, sessionCSRF, t)
	return t
}

// newToken returns 32 random bytes, base64url-encoded.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
