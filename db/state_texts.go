package db

import (
	"hash/maphash"

	"runsdesk/cache"
)

// stateTextsRemembered bounds how many suspended states stateTexts holds (as many as the
// runtime's pause memo).
const stateTextsRemembered = 512

// stateTexts hands list reads one shared string per suspended state text they read lately,
// so a page read again does not copy every row's state (2–6 KiB each) into a new string. A
// text is found by a 64-bit hash and compared whole: a text never comes back as another. It
// is safe for concurrent use.
type stateTexts struct {
	seed  maphash.Seed
	texts *cache.Cache[uint64, string]
}

func newStateTexts() *stateTexts {
	return &stateTexts{seed: maphash.MakeSeed(), texts: cache.New[uint64, string](cache.Options{Max: stateTextsRemembered})}
}

// text returns raw as a string, the one held for the same text when there is one; raw is
// not retained.
func (t *stateTexts) text(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	h := maphash.Bytes(t.seed, raw)
	if held, ok := t.texts.Get(h); ok && held == string(raw) {
		return held
	}
	s := string(raw)
	t.texts.Put(h, s)
	return s
}
