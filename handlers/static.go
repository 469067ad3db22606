package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/static"
)

// staticFile serves an embedded asset by its content-hashed name, cacheable for a year. Any
// other name is 404; there is no listing.
func (h *Handlers) staticFile(c echo.Context) error {
	asset, ok := h.assets.Lookup(static.PathPrefix + c.Param("file"))
	if !ok {
		return echo.ErrNotFound
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
	return c.Blob(http.StatusOK, asset.ContentType, asset.Body)
}

// favicon answers /favicon.ico, which browsers ask for whatever the layout links, with the
// SVG icon, cacheable for a day (the name is not content-hashed).
func (h *Handlers) favicon(c echo.Context) error {
	asset, _ := h.assets.Lookup(h.assets.Favicon)
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=86400")
	return c.Blob(http.StatusOK, asset.ContentType, asset.Body)
}
