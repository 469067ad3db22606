package schema

import (
	"container/list"
	"crypto/sha256"
	"encoding/json"
	"sync"
)

// Cache memoises Compile by the SHA-256 of the raw schema text, keeping at most its size in
// compiled schemas (the least recently used is dropped first). A compiled *Schema is
// read-only, so one may serve many requests at once. Compile errors are not cached. A Cache
// is safe for concurrent use; the zero value is not usable, use NewCache.
type Cache struct {
	mu    sync.Mutex
	size  int
	items map[[sha256.Size]byte]*list.Element
	order *list.List
}

type cached struct {
	key    [sha256.Size]byte
	schema *Schema
}

// NewCache returns a cache holding at most size compiled schemas (size < 1 means 256).
func NewCache(size int) *Cache {
	if size < 1 {
		size = 256
	}
	return &Cache{size: size, items: map[[sha256.Size]byte]*list.Element{}, order: list.New()}
}

// Compile returns the compiled schema of raw, compiling it only the first time the same text
// is seen; errors are those of the package-level Compile.
func (c *Cache) Compile(raw json.RawMessage) (*Schema, error) {
	key := sha256.Sum256(raw)
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		s := el.Value.(*cached).schema
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	s, err := Compile(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		return el.Value.(*cached).schema, nil
	}
	c.items[key] = c.order.PushFront(&cached{key: key, schema: s})
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cached).key)
	}
	return s, nil
}
