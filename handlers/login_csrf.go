package handlers

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// The sign-in form's CSRF defence needs no session: GET /login sets a short-lived pre-session
// cookie holding a random nonce, and the form's token is an HMAC of that nonce under a key all
// processes share (Config.LoginFormKey). POST /login needs a token that matches the cookie it
// arrives with, so a forged sign-in, which cannot read the cookie, cannot supply one. The
// cookie is dropped at sign-in.
const (
	loginCookieSecure   = "__Host-runsdesk_login"
	loginCookieInsecure = "runsdesk_login"
	loginFormLifetime   = time.Hour
	loginNonceLen       = 32
)

// loginMACLabel separates the login form's MAC from any other use of its key.
const loginMACLabel = "runsdesk login form\x00"

func (h *Handlers) loginCookieName() string {
	if h.secure {
		return loginCookieSecure
	}
	return loginCookieInsecure
}

// loginFormToken returns the sign-in form's CSRF token, for the visitor's pre-session cookie,
// setting a new cookie when there is none.
func (h *Handlers) loginFormToken(c echo.Context) string {
	nonce, ok := h.loginNonce(c)
	if !ok {
		b := make([]byte, loginNonceLen)
		_, _ = rand.Read(b)
		nonce = base64.RawURLEncoding.EncodeToString(b)
		h.setLoginCookie(c, nonce, int(loginFormLifetime/time.Second))
	}
	return h.loginMAC(nonce)
}

// verifyLoginCSRF refuses (403, audited) a POST whose token is neither the MAC of its
// pre-session cookie's nonce nor, for a visitor who already has a session, that session's
// CSRF token.
func (h *Handlers) verifyLoginCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if safeMethod(c) {
			return next(c)
		}
		got, err := submittedCSRF(c)
		if err != nil {
			return err
		}
		want := h.sessions.GetString(c.Request().Context(), sessionCSRF)
		if nonce, ok := h.loginNonce(c); ok {
			want = h.loginMAC(nonce)
		}
		if want == "" || !hmac.Equal([]byte(got), []byte(want)) {
			return h.csrfRejected(c)
		}
		return next(c)
	}
}

// endLoginForm drops the pre-session cookie once the person is signed in.
func (h *Handlers) endLoginForm(c echo.Context) {
	h.setLoginCookie(c, "", -1)
}

// loginNonce returns the nonce of the request's pre-session cookie, if it has a well-formed one.
func (h *Handlers) loginNonce(c echo.Context) (string, bool) {
	ck, err := c.Cookie(h.loginCookieName())
	if err != nil {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil || len(b) != loginNonceLen {
		return "", false
	}
	return ck.Value, true
}

func (h *Handlers) loginMAC(nonce string) string {
	m := hmac.New(sha256.New, h.loginKey)
	m.Write([]byte(loginMACLabel + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (h *Handlers) setLoginCookie(c echo.Context, value string, maxAge int) {
	c.SetCookie(&http.Cookie{Name: h.loginCookieName(), Value: value, Path: "/", MaxAge: maxAge,
		Secure: h.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}
