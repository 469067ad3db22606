// Package passwords verifies the password hashes a TYPO3 site stores for its backend accounts
// (be_users.password), read only: argon2i and argon2id as PHP's password_hash writes them,
// TYPO3's bcrypt ($2y$ over base64 of SHA-384 of the password) and TYPO3's PBKDF2
// ($pbkdf2-sha256$). It never writes or upgrades a hash.
package passwords

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"runsdesk/internal/argon2phc"
)

// Bounds on the argon2 parameters Verify accepts: above TYPO3's defaults (64 MiB, t=16, one
// thread) with room for a site that raised them, below what would let a tampered row stall a
// sign-in for long.
const (
	argon2MaxMemoryKiB = 256 * 1024
	argon2MaxTime      = 64
	argon2MaxThreads   = 8
)

// TYPO3's bounds on a bcrypt cost are 10–31; the upper one here is lower, as cost 31 would
// take days to verify.
const (
	bcryptMinCost = 10
	bcryptMaxCost = 16
	bcryptHashLen = 60
)

// Prefixes of the hash formats Verify knows.
const (
	bcryptPrefix = "$2y$"
	pbkdf2Prefix = "$pbkdf2-sha256$"
)

// TYPO3's bounds on a PBKDF2 iteration count, and the sizes it writes: a 16-byte salt and a
// 32-byte SHA-256 key.
const (
	pbkdf2MinIterations = 1000
	pbkdf2MaxIterations = 10_000_000
	pbkdf2SaltLen       = 16
	pbkdf2KeyLen        = sha256.Size
)

// typo3Base64 is the alphabet TYPO3's PBKDF2 hashes use (after passlib): standard base64 with
// '.' for '+', no padding. Strict, as TYPO3 compares whole strings: only the encoding it writes
// is accepted.
var typo3Base64 = base64.NewEncoding("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./").
	WithPadding(base64.NoPadding).Strict()

// Verify reports whether password matches hash, a be_users password as TYPO3 stores it. A
// hash of a format it does not know, or a malformed one, is an error; a wrong password is
// false with no error. Errors never quote the hash or the password.
func Verify(hash, password string) (bool, error) {
	switch {
	case strings.HasPrefix(hash, "$"+argon2phc.ID+"$"), strings.HasPrefix(hash, "$"+argon2phc.I+"$"):
		return verifyArgon2(hash, password)
	case strings.HasPrefix(hash, bcryptPrefix):
		return verifyBcrypt(hash, password)
	case strings.HasPrefix(hash, pbkdf2Prefix):
		return verifyPBKDF2(hash, password)
	}
	return false, errors.New("typo3 passwords: unknown password hash format")
}

func verifyArgon2(hash, password string) (bool, error) {
	h, err := argon2phc.Parse(hash, argon2phc.Limits{MaxMemoryKiB: argon2MaxMemoryKiB, MaxTime: argon2MaxTime, MaxThreads: argon2MaxThreads})
	if err != nil {
		return false, fmt.Errorf("typo3 passwords: %w", err)
	}
	return h.Matches(password), nil
}

// verifyBcrypt checks TYPO3's BcryptPasswordHash: PHP's bcrypt over
// base64(SHA-384(password)), which stays under bcrypt's 72 bytes and has no NUL byte.
// bcrypt's own errors quote parts of the hash, so they are not wrapped.
func verifyBcrypt(hash, password string) (bool, error) {
	malformed := errors.New("typo3 passwords: bcrypt hash is malformed or its cost out of range")
	cost, err := bcrypt.Cost([]byte(hash))
	if err != nil || len(hash) != bcryptHashLen || cost < bcryptMinCost || cost > bcryptMaxCost {
		return false, malformed
	}
	digest := sha512.Sum384([]byte(password))
	err = bcrypt.CompareHashAndPassword([]byte(hash), []byte(base64.StdEncoding.EncodeToString(digest[:])))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		return false, nil
	}
	return false, malformed
}

// verifyPBKDF2 checks TYPO3's Pbkdf2PasswordHash:
// $pbkdf2-sha256$<iterations>$<salt>$<key>, PBKDF2-HMAC-SHA256 of the password, salt and key in
// typo3Base64.
func verifyPBKDF2(hash, password string) (bool, error) {
	parts := strings.Split(strings.TrimPrefix(hash, pbkdf2Prefix), "$")
	if len(parts) != 3 {
		return false, errors.New("typo3 passwords: pbkdf2 hash is malformed")
	}
	iterations, err := strconv.Atoi(parts[0])
	if err != nil || strconv.Itoa(iterations) != parts[0] || iterations < pbkdf2MinIterations || iterations > pbkdf2MaxIterations {
		return false, errors.New("typo3 passwords: pbkdf2 iteration count is malformed or out of range")
	}
	salt, err := typo3Base64.DecodeString(parts[1])
	if err != nil || len(salt) != pbkdf2SaltLen {
		return false, errors.New("typo3 passwords: pbkdf2 salt is malformed")
	}
	key, err := typo3Base64.DecodeString(parts[2])
	if err != nil || len(key) != pbkdf2KeyLen {
		return false, errors.New("typo3 passwords: pbkdf2 key is malformed")
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iterations, pbkdf2KeyLen)
	if err != nil {
		return false, fmt.Errorf("typo3 passwords: pbkdf2: %w", err)
	}
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}
