// Package mfa is the arithmetic of the second sign-in factor, with no storage: TOTP secrets
// (SHA-1, 6 digits, 30-second steps, as every authenticator app reads them), the time step a
// code is valid for within one step of skew, the enrolment QR code, and single-use recovery
// codes (80 random bits each, stored by the caller only as their SHA-256).
package mfa

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"
)

// Period is the length of a time step; Skew the steps either side of now a code may be of.
const (
	Period = 30 * time.Second
	Skew   = 1
)

// RecoveryCodeCount is how many recovery codes a person gets at a time.
const RecoveryCodeCount = 10

// recoveryBytes is the entropy of one recovery code (80 bits).
const recoveryBytes = 10

// QRSize is the side of the enrolment QR code in pixels.
const QRSize = 240

// Factor is a person's TOTP factor as stored: the base32 secret, whether a code confirmed it
// (enrolment done), the last time step a code was accepted for, and how many unused recovery
// codes they have.
type Factor struct {
	Secret       string
	Confirmed    bool
	LastStep     int64
	RecoveryLeft int
}

// Secret is a fresh TOTP secret: its base32 text (typed into an app by hand) and the
// otpauth:// URL the QR code holds.
type Secret struct {
	Base32 string
	URL    string
}

// NewSecret returns a random 160-bit secret for account at issuer (both shown in the app).
func NewSecret(issuer, account string) (Secret, error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: account,
		Period: uint(Period / time.Second), SecretSize: 20, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return Secret{}, fmt.Errorf("mfa: new secret: %w", err)
	}
	return Secret{Base32: key.Secret(), URL: key.URL()}, nil
}

// URL is the otpauth:// URL of secret (base32) for account at issuer, as NewSecret makes it.
func URL(issuer, account, secret string) (string, error) {
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(secret))
	if err != nil {
		return "", fmt.Errorf("mfa: secret is not base32: %w", err)
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: account, Secret: raw,
		Period: uint(Period / time.Second), Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return "", fmt.Errorf("mfa: secret URL: %w", err)
	}
	return key.URL(), nil
}

// QRCode is the PNG image (QRSize square) of an otpauth:// URL.
func QRCode(url string) ([]byte, error) {
	key, err := otp.NewKeyFromURL(url)
	if err != nil {
		return nil, fmt.Errorf("mfa: QR code: %w", err)
	}
	img, err := key.Image(QRSize, QRSize)
	if err != nil {
		return nil, fmt.Errorf("mfa: QR code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("mfa: QR code: %w", err)
	}
	return buf.Bytes(), nil
}

// Step is the time step t falls in.
func Step(t time.Time) int64 { return t.Unix() / int64(Period/time.Second) }

// Code is the code of secret for the step t falls in.
func Code(secret string, t time.Time) (string, error) {
	return stepCode(secret, Step(t))
}

func stepCode(secret string, step int64) (string, error) {
	if step < 0 {
		return "", errors.New("mfa: negative time step")
	}
	return hotp.GenerateCodeCustom(secret, uint64(step), hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
}

// IsCode reports whether typed has the form of a TOTP code: six digits, spaces ignored.
func IsCode(typed string) bool {
	c := compact(typed)
	if len(c) != 6 {
		return false
	}
	for _, r := range c {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Match returns the earliest step after `after` within Skew steps of now whose code is typed
// (spaces ignored); ok is false when there is none, so a step already used (≤ after) never
// matches again.
func Match(secret, typed string, now time.Time, after int64) (step int64, ok bool) {
	if !IsCode(typed) {
		return 0, false
	}
	typed = compact(typed)
	centre := Step(now)
	for s := centre - Skew; s <= centre+Skew; s++ {
		want, err := stepCode(secret, s)
		if err != nil {
			continue
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(typed)) == 1 && s > after && !ok {
			step, ok = s, true
		}
	}
	return step, ok
}

// NewRecoveryCodes returns n fresh recovery codes, each 80 random bits written as four
// groups of four base32 letters and digits ("abcd-efgh-ijkl-mnop").
func NewRecoveryCodes(n int) ([]string, error) {
	out := make([]string, n)
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	for i := range out {
		b := make([]byte, recoveryBytes)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("mfa: recovery codes: %w", err)
		}
		s := strings.ToLower(enc.EncodeToString(b))
		out[i] = s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16]
	}
	return out, nil
}

// HashRecoveryCode is what is stored of a recovery code: the hex SHA-256 of its letters and
// digits in lower case, so dashes, spaces and case do not matter when it is typed.
func HashRecoveryCode(code string) string {
	c := strings.ToLower(strings.ReplaceAll(compact(code), "-", ""))
	sum := sha256.Sum256([]byte(c))
	return hex.EncodeToString(sum[:])
}

// compact drops every space of s.
func compact(s string) string {
	return strings.Join(strings.Fields(s), "")
}
