package db

import "sync"

// memo is a map safe for concurrent use that holds at most limit entries: once full, the next
// put starts it afresh. It keeps hints only (sequenceHints, loadedSessions): whatever it
// forgets is read from the database again.
type memo[K comparable, V any] struct {
	mu    sync.Mutex
	limit int
	m     map[K]V
}

func newMemo[K comparable, V any](limit int) *memo[K, V] {
	return &memo[K, V]{limit: limit}
}

func (m *memo[K, V]) put(k K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= m.limit {
		m.m = make(map[K]V)
	}
	m.m[k] = v
}

// take returns and forgets k's entry.
func (m *memo[K, V]) take(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	delete(m.m, k)
	return v, ok
}

func (m *memo[K, V]) forget(k K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, k)
}
