package db

import "runsdesk/cache"

// stateTextsRemembered bounds how many runs' suspended states stateTexts holds (as many as
// the runtime's pause memo holds states).
const stateTextsRemembered = 512

// stateTexts hands list reads, per run, the string of the suspended state they read last
// time when the text is still the same (compared whole), so a page read again neither copies
// every row's state (2–6 KiB each) into a new string nor hashes it. It is safe for
// concurrent use.
type stateTexts struct {
	texts *cache.Cache[int64, string]
}

func newStateTexts() *stateTexts {
	return &stateTexts{texts: cache.New[int64, string](cache.Options{Max: stateTextsRemembered})}
}

// text returns raw, run uid's state as just read, as a string: the one held for uid when it
// has the same text; raw is not retained.
func (t *stateTexts) text(uid int64, raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	if held, ok := t.texts.Get(uid); ok && held == string(raw) {
		return held
	}
	s := string(raw)
	t.texts.Put(uid, s)
	return s
}
