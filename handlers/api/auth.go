package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// The API authenticates with `Authorization: Bearer TOKEN` only. It reads no cookie and no
// session, so a browser can never attach the credentials to a cross-site request on its own:
// there is nothing for CSRF to ride on, and the API has no CSRF token by design. Tokens in
// the query string are not read either (they would end up in logs).

const actorKey = "runsdesk.api.actor"

// maxTokenLength bounds what is looked up; db tokens are far shorter.
const maxTokenLength = 256

// authenticate resolves the bearer token to its service account and stores the actor in the
// context. A missing, malformed, unknown, disabled or expired (code token_expired) token is 401
// with WWW-Authenticate: Bearer and uses one of the client address's failure budget; an address
// whose budget is used up gets 429 with Retry-After before its token is looked at. A store
// failure is 503 (fail closed).
func (a *API) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		addr := c.RealIP()
		if wait := a.failures.wait(addr); wait > 0 {
			return rateLimited(c, wait, "too many failed authentications from this address; retry later")
		}
		actor, token, err := a.credentials(c)
		var p *problem
		if errors.As(err, &p) && p.Status == http.StatusUnauthorized {
			a.failures.take(addr)
		}
		if err != nil {
			return err
		}
		c.Set(actorKey, actor)
		c.Set(limitKey, limitKeyOf(token))
		return next(c)
	}
}

// credentials returns the service account and token of the request's bearer credential, or
// the 401 (or 503) that refuses it.
func (a *API) credentials(c echo.Context) (runtime.Actor, string, error) {
	token, present := bearerToken(c.Request())
	if !present {
		return runtime.Actor{}, "", unauthorized(c, "unauthorized", `Bearer realm="runsdesk"`, "authentication required: send Authorization: Bearer TOKEN")
	}
	if token == "" {
		return runtime.Actor{}, "", invalidToken(c)
	}
	actor, err := a.tokens.ActorForToken(c.Request().Context(), token)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return runtime.Actor{}, "", invalidToken(c)
	case errors.Is(err, runtime.ErrTokenExpired):
		return runtime.Actor{}, "", unauthorized(c, "token_expired", `Bearer realm="runsdesk", error="invalid_token", error_description="the token expired"`, "the token expired; create a new one")
	case err != nil:
		return runtime.Actor{}, "", &problem{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "authentication is unavailable; try again", Err: err}
	case actor.Disabled || actor.Role != runtime.RoleService:
		return runtime.Actor{}, "", invalidToken(c)
	}
	return actor, token, nil
}

// bearerToken returns the token of the single Authorization header, and whether a Bearer
// credential was presented at all. A malformed credential is presented with token "".
func bearerToken(r *http.Request) (string, bool) {
	values := r.Header.Values(echo.HeaderAuthorization)
	if len(values) == 0 {
		return "", false
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if len(values) != 1 || !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	token = strings.TrimSpace(token)
	if token == "" || len(token) > maxTokenLength || strings.ContainsAny(token, " \t") {
		return "", true
	}
	return token, true
}

func invalidToken(c echo.Context) error {
	return unauthorized(c, "invalid_token", `Bearer realm="runsdesk", error="invalid_token"`, "the token is not valid")
}

func unauthorized(c echo.Context, code, challenge, message string) error {
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, challenge)
	return apiError(http.StatusUnauthorized, code, message)
}

// requireScope refuses (403 insufficient_scope) an actor whose service account lacks scope.
func requireScope(scope string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if actorOf(c).HasScope(scope) {
				return next(c)
			}
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="runsdesk", error="insufficient_scope", scope="`+scope+`"`)
			return apiError(http.StatusForbidden, "insufficient_scope", "this token lacks the "+scope+" scope")
		}
	}
}

// actorOf returns the authenticated actor; the zero Actor (which may do nothing) if none.
func actorOf(c echo.Context) runtime.Actor {
	actor, _ := c.Get(actorKey).(runtime.Actor)
	return actor
}
