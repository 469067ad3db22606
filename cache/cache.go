// Package cache is the desk's one in-memory cache: a map bounded by its entry count that
// drops the least recently used entry first, whose entries may expire, and whose loads of
// one key are shared by everyone asking for it meanwhile. It imports nothing of runsdesk, so
// every package may use it.
package cache

import (
	"sync"
	"time"
)

// Options bound a Cache and set its clock.
type Options struct {
	// Max is how many entries the cache holds at most; it must be at least 1.
	Max int
	// TTL is how long an entry is served after it was put (for GetOrLoad: after its load
	// began), by the clock's wall time; an entry put at a later time than the clock's now
	// (the clock went back) is not served either. 0 keeps entries until they are dropped for
	// room or deleted.
	TTL time.Duration
	// Now is the clock TTL is measured on; nil is time.Now.
	Now func() time.Time
}

// Cache maps keys to values, holding at most Options.Max entries: a Put into a full cache
// drops the least recently used one (Get, GetOrLoad and Put use an entry). It is safe for
// concurrent use; the zero value is not usable, use New.
type Cache[K comparable, V any] struct {
	mu      sync.Mutex
	max     int
	ttl     time.Duration
	now     func() time.Time
	entries map[K]*entry[K, V]
	// recent is the sentinel of the ring of entries, most recently used first.
	recent entry[K, V]
	// spare is a removed entry kept for the next insert, so take-then-put does not allocate.
	spare *entry[K, V]
	loads map[K]*flight[V]
}

type entry[K comparable, V any] struct {
	key        K
	val        V
	at         int64
	prev, next *entry[K, V]
}

// flight is one load in progress; done is closed when it has ended.
type flight[V any] struct {
	done chan struct{}
	val  V
	ok   bool
}

// New returns an empty cache bounded by o. It panics when o.Max is below 1.
func New[K comparable, V any](o Options) *Cache[K, V] {
	if o.Max < 1 {
		panic("cache: Options.Max must be at least 1")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Cache[K, V]{max: o.Max, ttl: o.TTL, now: o.Now, entries: make(map[K]*entry[K, V])}
	c.recent.prev, c.recent.next = &c.recent, &c.recent
	return c
}

// Get returns key's value while it is held and unexpired.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.get(key)
}

// Put holds v as key's value, put now.
func (c *Cache[K, V]) Put(key K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(key, v, c.stamp())
}

// Take returns key's value while it is held and unexpired, and forgets it either way.
func (c *Cache[K, V]) Take(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	e := c.lookup(key)
	if e == nil {
		return zero, false
	}
	v, ok := e.val, c.ttl <= 0 || c.fresh(e)
	c.remove(e)
	if !ok {
		return zero, false
	}
	return v, true
}

// Delete forgets key's value. A load of key in progress still puts what it loads.
func (c *Cache[K, V]) Delete(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.lookup(key); e != nil {
		c.remove(e)
	}
}

// Len is how many entries are held, expired ones included until they are dropped.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// GetOrLoad returns key's value, calling load when it is not held (or expired) and putting
// what it returns, stamped when the load began. While a load of key runs, others asking for
// key wait for it and share its value. A failed load is not put and not shared: its error
// goes to its own caller, and each waiter then asks again (one of them loading). load must
// not ask this cache for key itself.
func (c *Cache[K, V]) GetOrLoad(key K, load func() (V, error)) (V, error) {
	c.mu.Lock()
	v, ok := c.get(key)
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	return c.miss(key, load)
}

// miss is GetOrLoad once key was not held: it joins key's load in progress or starts one.
func (c *Cache[K, V]) miss(key K, load func() (V, error)) (V, error) {
	for {
		c.mu.Lock()
		if v, ok := c.get(key); ok {
			c.mu.Unlock()
			return v, nil
		}
		if f := c.loads[key]; f != nil {
			c.mu.Unlock()
			<-f.done
			if f.ok {
				return f.val, nil
			}
			continue
		}
		f := &flight[V]{done: make(chan struct{})}
		if c.loads == nil {
			c.loads = make(map[K]*flight[V])
		}
		c.loads[key] = f
		at := c.stamp()
		c.mu.Unlock()
		return c.fly(key, f, at, load)
	}
}

// fly runs f's load and ends f, also when load panics.
func (c *Cache[K, V]) fly(key K, f *flight[V], at int64, load func() (V, error)) (V, error) {
	defer func() {
		c.mu.Lock()
		delete(c.loads, key)
		if f.ok {
			c.put(key, f.val, at)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	v, err := load()
	if err == nil {
		f.val, f.ok = v, true
	}
	return v, err
}

// stamp is the time an entry put now is put at; the clock is read only when entries expire.
func (c *Cache[K, V]) stamp() int64 {
	if c.ttl <= 0 {
		return 0
	}
	return c.now().UnixNano()
}

func (c *Cache[K, V]) get(key K) (V, bool) {
	e := c.lookup(key)
	if e != nil && (c.ttl <= 0 || c.fresh(e)) {
		c.use(e)
		return e.val, true
	}
	if e != nil {
		c.remove(e)
	}
	var zero V
	return zero, false
}

// fresh reports whether e, in a cache whose entries expire, may be served at the clock's now.
func (c *Cache[K, V]) fresh(e *entry[K, V]) bool {
	age := time.Duration(c.now().UnixNano() - e.at)
	return age >= 0 && age < c.ttl
}

// lookup is key's entry; a one-entry cache compares its entry's key instead of hashing.
func (c *Cache[K, V]) lookup(key K) *entry[K, V] {
	if c.max == 1 {
		if e := c.recent.next; e != &c.recent && e.key == key {
			return e
		}
		return nil
	}
	return c.entries[key]
}

func (c *Cache[K, V]) put(key K, v V, at int64) {
	if e := c.lookup(key); e != nil {
		e.val, e.at = v, at
		c.use(e)
		return
	}
	if len(c.entries) >= c.max {
		c.remove(c.recent.prev)
	}
	e := c.spare
	if e == nil {
		e = new(entry[K, V])
	}
	c.spare = nil
	e.key, e.val, e.at = key, v, at
	c.entries[key] = e
	c.link(e)
}

// use makes e the most recently used entry.
func (c *Cache[K, V]) use(e *entry[K, V]) {
	if c.recent.next == e {
		return
	}
	c.unlink(e)
	c.link(e)
}

func (c *Cache[K, V]) link(e *entry[K, V]) {
	e.prev, e.next = &c.recent, c.recent.next
	e.next.prev = e
	c.recent.next = e
}

func (c *Cache[K, V]) unlink(e *entry[K, V]) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (c *Cache[K, V]) remove(e *entry[K, V]) {
	c.unlink(e)
	delete(c.entries, e.key)
	*e = entry[K, V]{}
	c.spare = e
}
