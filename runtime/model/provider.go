package model

import (
	"fmt"
	"net/http"
	"time"
)

// The provider kinds New knows.
const (
	KindOpenAI   = "openai"
	KindScripted = "scripted"
)

// Defaults applied to zero Settings fields.
const (
	DefaultTimeout    = 60 * time.Second
	DefaultMaxRetries = 3
	MaxMaxRetries     = 10
)

// New builds the provider s.Kind names: NewOpenAI for "openai", NewScripted for "scripted". An
// unknown kind is an error wrapping ErrUnknownKind that names the kind. client and getenv are
// used by openai only and may be nil (a fresh client, os.Getenv).
func New(s Settings, client *http.Client, getenv func(string) string) (Provider, error) {
	switch s.Kind {
	case KindOpenAI:
		return NewOpenAI(s, client, getenv)
	case KindScripted:
		return NewScripted(s.Script)
	}
	return nil, fmt.Errorf("model: %w %q (want %q or %q)", ErrUnknownKind, s.Kind, KindOpenAI, KindScripted)
}
