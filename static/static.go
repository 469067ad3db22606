// Package static embeds runsdesk's stylesheet, scripts and icon and serves them under content-hashed
// paths (/static/app.<hash>.css), so they can be cached for a year and a new release is
// fetched at once. Only the embedded files exist: there is no directory listing and no path
// outside the list.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

//go:embed app.css app.js events-worker.js favicon.svg
var files embed.FS

// PathPrefix is the URL prefix of every asset.
const PathPrefix = "/static/"

// Asset is one embedded file under its hashed path.
type Asset struct {
	Path        string
	ContentType string
	Body        []byte
}

// Assets are the embedded files, addressable by hashed path. CSS, JS, Worker and Favicon are
// the paths of app.css, app.js, events-worker.js (the live desk's shared worker) and
// favicon.svg. An Assets is immutable and safe for concurrent use.
type Assets struct {
	CSS     string
	JS      string
	Worker  string
	Favicon string
	byPath  map[string]Asset
}

// New hashes the embedded files (first 12 hex digits of SHA-256) and returns their paths.
func New() (*Assets, error) {
	a := &Assets{byPath: map[string]Asset{}}
	for _, f := range []struct {
		name, contentType string
		dst               *string
	}{
		{"app.css", "text/css; charset=utf-8", &a.CSS},
		{"app.js", "text/javascript; charset=utf-8", &a.JS},
		{"events-worker.js", "text/javascript; charset=utf-8", &a.Worker},
		{"favicon.svg", "image/svg+xml", &a.Favicon},
	} {
		body, err := fs.ReadFile(files, f.name)
		if err != nil {
			return nil, fmt.Errorf("static: %w", err)
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(f.name)
		p := PathPrefix + strings.TrimSuffix(f.name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		a.byPath[p] = Asset{Path: p, ContentType: f.contentType, Body: body}
		*f.dst = p
	}
	return a, nil
}

// Lookup returns the asset served at urlPath (e.g. "/static/app.0123456789ab.css").
func (a *Assets) Lookup(urlPath string) (Asset, bool) {
	asset, ok := a.byPath[urlPath]
	return asset, ok
}
