package schema

import (
	"encoding/json"
	"hash/maphash"

	"runsdesk/cache"
)

// Facts memoises what InputDigest and Usable read of an input schema, by the schema's text
// (looked up by a 64-bit hash, compared whole, as Cache does): the schema of a tool is the
// same text in every run that pauses on it, so a decision canonicalizes and inspects it once
// per text instead of per submission. Its results are those of InputDigest and Usable. It
// keeps at most its size in texts (the least recently used is dropped first) and is safe for
// concurrent use; the zero value is not usable, use NewFacts.
type Facts struct {
	seed  maphash.Seed
	texts *cache.Cache[uint64, schemaFacts]
}

// schemaFacts is what was read of one schema text.
type schemaFacts struct {
	text string
	// canonical is canonicalize's form of the text (read-only), when ok.
	canonical []byte
	ok        bool
	usable    bool
}

// NewFacts returns a memo of at most size schema texts (size < 1 means 256).
func NewFacts(size int) *Facts {
	if size < 1 {
		size = 256
	}
	return &Facts{seed: maphash.MakeSeed(), texts: cache.New[uint64, schemaFacts](cache.Options{Max: size})}
}

// of returns the facts of raw, reading them only the first time the text is seen.
func (f *Facts) of(raw json.RawMessage) schemaFacts {
	got, _ := f.texts.GetOrLoad(maphash.Bytes(f.seed, raw), func() (schemaFacts, error) { return readFacts(raw), nil })
	if got.text != string(raw) {
		return readFacts(raw)
	}
	return got
}

func readFacts(raw json.RawMessage) schemaFacts {
	canonical, ok := canonicalize(raw)
	return schemaFacts{text: string(raw), canonical: canonical, ok: ok, usable: Usable(raw)}
}

// InputDigest is the package's InputDigest, with inputSchema canonicalized once per text.
func (f *Facts) InputDigest(pendingCalls any, inputToolName string, inputSchema json.RawMessage) string {
	if facts := f.of(inputSchema); facts.ok {
		if canon, ok := inputCanonicalJSONOf(pendingCalls, inputToolName, facts.canonical); ok {
			return hashHex(canon)
		}
	}
	return InputDigest(pendingCalls, inputToolName, inputSchema)
}

// Usable is the package's Usable, checked once per text.
func (f *Facts) Usable(raw json.RawMessage) bool { return f.of(raw).usable }
