package db

import (
	"crypto/sha256"
	"testing"
	"time"
)

// BenchmarkSequenceHint is one append's use of the hints: take the run's hint, keep the next.
func BenchmarkSequenceHint(b *testing.B) {
	h := newSequenceHints()
	h.put(42, 1)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n := h.next(42)
		h.put(42, n+1)
	}
}

// BenchmarkLoadedSession is one request's use of the loaded sessions: find keeps, commit takes.
func BenchmarkLoadedSession(b *testing.B) {
	s := NewSessionStore(nil, DefaultSessionExpirySlack)
	token := "Vd2Zt5cAmXo5sFMmB7lhKj2L4yS5fIY1vWFJ4M6bq0Q"
	l := loadedSession{sum: sha256.Sum256([]byte("data")), expiry: time.Unix(1_800_000_000, 0)}
	b.ReportAllocs()
	for b.Loop() {
		s.loaded.Put(token, l)
		if _, ok := s.loaded.Take(token); !ok {
			b.Fatal("lost")
		}
	}
}
