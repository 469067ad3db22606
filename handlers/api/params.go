package api

import (
	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// runUUID returns the :uuid path parameter when it has the shape of a UUID; anything else
// cannot name a run and is 404 run_not_found without a lookup.
func runUUID(c echo.Context) (string, error) {
	id := c.Param("uuid")
	if !isUUID(id) {
		return "", fromRuntime(&runtime.Error{Code: runtime.CodeRunNotFound, Message: "not a run id"})
	}
	return id, nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if ch != '-' {
				return false
			}
		case '0' <= ch && ch <= '9', 'a' <= ch && ch <= 'f', 'A' <= ch && ch <= 'F':
		default:
			return false
		}
	}
	return true
}

// pathRun is the :uuid path parameter when it is shaped like a UUID, else "".
func pathRun(c echo.Context) string {
	if id := c.Param("uuid"); isUUID(id) {
		return id
	}
	return ""
}

// requestID is the id the respond middleware put on the response.
func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}
