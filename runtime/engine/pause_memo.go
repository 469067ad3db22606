package engine

import (
	"sync"

	"runsdesk/cache"
	"runsdesk/runtime"
	"runsdesk/runtime/schema"
)

// pausesRemembered bounds how many stored states the pause memo holds.
const pausesRemembered = 512

// pauseMemo remembers how list cards read stored states (DecodePause, and the approval
// digest and the input schema's usability once they are asked for), by the state's text: the same text always reads the same, so
// an entry never goes stale, and a run whose state changed is read again. What it returns is
// shared between readers and must not be modified. A full memo forgets the least recently
// read state.
type pauseMemo struct {
	entries *cache.Cache[string, *readPause]
}

// readPause is how DecodePause read one state.
type readPause struct {
	pause runtime.PauseState
	err   error
	// approvalDigest is the digest of the pause as an approval (computed once, when asked).
	approvalDigest func() string
	// inputUsable is schema.Usable of the pause's input schema (checked once, when asked).
	inputUsable func() bool
}

func newPauseMemo() *pauseMemo {
	return &pauseMemo{entries: cache.New[string, *readPause](cache.Options{Max: pausesRemembered})}
}

// read returns how DecodePause reads raw, decoding it only when the memo does not hold it.
func (m *pauseMemo) read(raw string) *readPause {
	r, _ := m.entries.GetOrLoad(raw, func() (*readPause, error) { return decodeForCard(raw), nil })
	return r
}

func decodeForCard(raw string) *readPause {
	p, err := runtime.DecodePause(raw)
	return &readPause{pause: p, err: err,
		approvalDigest: sync.OnceValue(func() string { return pauseDigest(p) }),
		inputUsable:    sync.OnceValue(func() bool { return schema.Usable(p.InputSchema) }),
	}
}
