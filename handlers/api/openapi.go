package api

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// openAPIDocument is the OpenAPI 3.1 description of every route Register mounts, kept by hand
// beside the handlers; the route and traffic tests hold it exact.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIPath is the route of the API's description, below the API's group.
const openAPIPath = "/openapi.json"

// OpenAPI returns the API's OpenAPI 3.1 document, as GET /api/v1/openapi.json serves it.
func OpenAPI() []byte { return bytes.Clone(openAPIDocument) }

// openAPIETag is the strong ETag of the document.
func openAPIETag() string {
	sum := sha256.Sum256(openAPIDocument)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// openAPI is GET /openapi.json: the API's description, public (no token, no token's rate
// limit), revalidated by its ETag (304 when If-None-Match names it).
func (a *API) openAPI(c echo.Context) error {
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set("ETag", a.docETag)
	if matches(c.Request().Header.Values("If-None-Match"), a.docETag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
}

// matches reports whether If-None-Match values name etag (or "*"), weak or strong.
func matches(values []string, etag string) bool {
	for _, v := range values {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == etag || tag == "*" {
				return true
			}
		}
	}
	return false
}
