package model

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Errors a provider returns, to be tested with errors.Is.
var (
	ErrUnknownKind       = errors.New("unknown provider kind")
	ErrInvalidSettings   = errors.New("invalid provider settings")
	ErrMissingEnv        = errors.New("environment variable is not set")
	ErrResponseTooLarge  = errors.New("provider response too large")
	ErrMalformedResponse = errors.New("malformed provider response")
)

// StatusError is a non-2xx answer from a provider endpoint. Message is a short excerpt of the
// error the endpoint gave, with control characters removed and the API key, should the
// endpoint echo it, redacted. RetryAfter is the endpoint's Retry-After, 0 when it sent none.
type StatusError struct {
	Code       int
	Message    string
	RetryAfter time.Duration
}

// Error renders the status and the excerpt.
func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("model: provider answered HTTP %d", e.Code)
	}
	return fmt.Sprintf("model: provider answered HTTP %d: %s", e.Code, e.Message)
}

// Retryable reports whether a later attempt may succeed: HTTP 429 and every 5xx.
func (e *StatusError) Retryable() bool {
	return e.Code == 429 || e.Code >= 500
}

// TransportError is an exchange with a provider endpoint that failed before a status arrived:
// a connection failure, a timeout of one attempt, a broken body. Its message never includes the
// endpoint URL.
type TransportError struct {
	Err error
}

// Error describes the failure.
func (e *TransportError) Error() string {
	return "model: provider could not be reached: " + e.Err.Error()
}

// Unwrap returns the underlying failure.
func (e *TransportError) Unwrap() error { return e.Err }

// IsRetryable reports whether err is a transient provider failure a later attempt might not
// hit: a *StatusError with 429 or 5xx, or a *TransportError. It stays true for the error
// returned once retries are exhausted, and is false for cancellation, settings and
// malformed-response errors.
func IsRetryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Retryable()
	}
	var te *TransportError
	return errors.As(err, &te)
}

// maxExcerpt is the longest error excerpt, in runes, a StatusError carries.
const maxExcerpt = 200

// sanitize turns an endpoint's error text into a one-line excerpt without secret.
func sanitize(msg, secret string) string {
	if secret != "" {
		msg = strings.ReplaceAll(msg, secret, "[redacted]")
	}
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, msg)
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) > maxExcerpt {
		msg = string([]rune(msg)[:maxExcerpt]) + "…"
	}
	return msg
}
