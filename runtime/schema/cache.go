package schema

import (
	"crypto/sha256"
	"encoding/json"

	"runsdesk/cache"
)

// Cache memoises Compile by the SHA-256 of the raw schema text, keeping at most its size in
// compiled schemas (the least recently used is dropped first). A compiled *Schema is
// read-only, so one may serve many requests at once. Compile errors are not cached; one text
// compiled by several callers at once is compiled once. A Cache is safe for concurrent use;
// the zero value is not usable, use NewCache.
type Cache struct {
	compiled *cache.Cache[[sha256.Size]byte, *Schema]
}

// NewCache returns a cache holding at most size compiled schemas (size < 1 means 256).
func NewCache(size int) *Cache {
	if size < 1 {
		size = 256
	}
	return &Cache{compiled: cache.New[[sha256.Size]byte, *Schema](cache.Options{Max: size})}
}

// Compile returns the compiled schema of raw, compiling it only the first time the same text
// is seen; errors are those of the package-level Compile.
func (c *Cache) Compile(raw json.RawMessage) (*Schema, error) {
	return c.compiled.GetOrLoad(sha256.Sum256(raw), func() (*Schema, error) { return Compile(raw) })
}
