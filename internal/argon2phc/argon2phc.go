// Package argon2phc reads and writes argon2 password hashes as PHC strings
// ($argon2id$v=19$m=…,t=…,p=…$salt$key, unpadded standard base64), the form runsdesk stores and
// PHP's password_hash writes.
package argon2phc

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// The argon2 variants a PHC string may name.
const (
	ID = "argon2id"
	I  = "argon2i"
)

// Limits bound the parameters Parse accepts, so a tampered row cannot make one verification
// allocate gigabytes or run for minutes.
type Limits struct {
	MaxMemoryKiB uint32
	MaxTime      uint32
	MaxThreads   uint8
}

// Hash is one argon2 hash with its parameters: Variant is ID or I.
type Hash struct {
	Variant string
	Memory  uint32
	Time    uint32
	Threads uint8
	Salt    []byte
	Key     []byte
}

// New derives the key of password under variant (ID or I) and the given parameters.
func New(variant, password string, salt []byte, memory, time uint32, threads uint8, keyLen uint32) Hash {
	h := Hash{Variant: variant, Memory: memory, Time: time, Threads: threads, Salt: salt}
	h.Key = h.derive(password, keyLen)
	return h
}

// Parse reads an argon2i or argon2id PHC string of argon2 version 19 whose parameters are
// within lim. Any other string is an error, which never quotes it.
func Parse(phc string, lim Limits) (Hash, error) {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[0] != "" || (parts[1] != ID && parts[1] != I) ||
		parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return Hash{}, errors.New("password hash is not an argon2i or argon2id PHC string")
	}
	var m, t, threads uint64
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &threads); err != nil {
		return Hash{}, errors.New("password hash parameters are malformed")
	}
	if m < 8 || m > uint64(lim.MaxMemoryKiB) || t < 1 || t > uint64(lim.MaxTime) || threads < 1 || threads > uint64(lim.MaxThreads) {
		return Hash{}, errors.New("password hash parameters out of range")
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return Hash{}, errors.New("password hash salt is malformed")
	}
	key, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 64 {
		return Hash{}, errors.New("password hash key is malformed")
	}
	return Hash{Variant: parts[1], Memory: uint32(m), Time: uint32(t), Threads: uint8(threads), Salt: salt, Key: key}, nil
}

// String returns h as a PHC string, the form Parse reads.
func (h Hash) String() string {
	return fmt.Sprintf("$%s$v=%d$m=%d,t=%d,p=%d$%s$%s", h.Variant, argon2.Version, h.Memory, h.Time, h.Threads,
		base64.RawStdEncoding.EncodeToString(h.Salt), base64.RawStdEncoding.EncodeToString(h.Key))
}

// Matches reports whether password derives h's key, comparing in constant time.
func (h Hash) Matches(password string) bool {
	return subtle.ConstantTimeCompare(h.derive(password, uint32(len(h.Key))), h.Key) == 1
}

func (h Hash) derive(password string, keyLen uint32) []byte {
	if h.Variant == I {
		return argon2.Key([]byte(password), h.Salt, h.Time, h.Memory, h.Threads, keyLen)
	}
	return argon2.IDKey([]byte(password), h.Salt, h.Time, h.Memory, h.Threads, keyLen)
}
