package schema

import (
	"encoding/json"
	"hash/maphash"

	"runsdesk/cache"
)

// Cache memoises Compile by the raw schema text: looked up by a 64-bit hash of the text (no
// cryptographic digest per lookup) and then compared whole, so two texts never share a compiled
// schema (a text whose hash another holds is compiled uncached). It keeps at most its size in
// compiled schemas (the least recently used is dropped first). A compiled *Schema is
// read-only, so one may serve many requests at once. Compile errors are not cached; one text
// compiled by several callers at once is compiled once. A Cache is safe for concurrent use;
// the zero value is not usable, use NewCache.
type Cache struct {
	seed     maphash.Seed
	compiled *cache.Cache[uint64, compiled]
}

// compiled is one cached compilation and the text it is of.
type compiled struct {
	text   string
	schema *Schema
}

// NewCache returns a cache holding at most size compiled schemas (size < 1 means 256).
func NewCache(size int) *Cache {
	if size < 1 {
		size = 256
	}
	return &Cache{seed: maphash.MakeSeed(), compiled: cache.New[uint64, compiled](cache.Options{Max: size})}
}

// Compile returns the compiled schema of raw, compiling it only the first time the same text
// is seen; errors are those of the package-level Compile.
func (c *Cache) Compile(raw json.RawMessage) (*Schema, error) {
	got, err := c.compiled.GetOrLoad(maphash.Bytes(c.seed, raw), func() (compiled, error) {
		sch, err := Compile(raw)
		return compiled{text: string(raw), schema: sch}, err
	})
	if err != nil {
		return nil, err
	}
	if got.text != string(raw) {
		return Compile(raw)
	}
	return got.schema, nil
}
