// Package syncbuf is a byte buffer safe for concurrent writers and readers: what a test hands
// to a logger, a server or a child process and reads while they write.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer guarded by a mutex; the zero value is ready to use.
type Buffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

// Write appends p, as bytes.Buffer does.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

// Writes is how many writes the buffer took.
func (s *Buffer) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
