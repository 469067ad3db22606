package runtime

import (
	"hash/maphash"
	"sync"

	"runsdesk/runtime/schema"
)

// pausesRemembered bounds how many stored states the pause memo holds.
const pausesRemembered = 512

// pauseMemo remembers how list cards read stored states (decodePause, and the approval
// digest and the input schema's usability once they are asked for), by the state's text: the same text always reads the same, so
// an entry never goes stale, and a run whose state changed is read again. What it returns is
// shared between readers and must not be modified. A full memo forgets an entry at random.
type pauseMemo struct {
	seed    maphash.Seed
	mu      sync.Mutex
	entries map[uint64]*readPause
}

// readPause is how decodePause read one state.
type readPause struct {
	raw   string
	pause PauseState
	err   error
	// approvalDigest is the digest of the pause as an approval (computed once, when asked).
	approvalDigest func() string
	// inputUsable is schema.Usable of the pause's input schema (checked once, when asked).
	inputUsable func() bool
}

func newPauseMemo() *pauseMemo {
	return &pauseMemo{seed: maphash.MakeSeed(), entries: map[uint64]*readPause{}}
}

// read returns how decodePause reads raw, decoding it only when the memo does not hold it.
func (m *pauseMemo) read(raw string) *readPause {
	key := maphash.String(m.seed, raw)
	m.mu.Lock()
	r, ok := m.entries[key]
	m.mu.Unlock()
	if ok && r.raw == raw {
		return r
	}
	r = decodeForCard(raw)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= pausesRemembered {
		for k := range m.entries {
			delete(m.entries, k)
			break
		}
	}
	m.entries[key] = r
	return r
}

func decodeForCard(raw string) *readPause {
	p, err := decodePause(raw)
	return &readPause{raw: raw, pause: p, err: err,
		approvalDigest: sync.OnceValue(func() string { return pauseDigest(p) }),
		inputUsable:    sync.OnceValue(func() bool { return schema.Usable(p.InputSchema) }),
	}
}
