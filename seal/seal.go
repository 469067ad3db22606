// Package seal seals stored run state at rest with AES-256-GCM: a fresh nonce per write, the
// key id in the envelope, and the place a value belongs to (table, column, run uuid) as
// associated data, so a value moved to another row or column does not open.
//
// An envelope is text: "rdseal1:" key id ":" base64url(nonce ‖ ciphertext ‖ tag). A value
// without that prefix is legacy cleartext and opens as itself; "" always stays "".
package seal

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Prefix starts every envelope; a stored value without it is cleartext.
const Prefix = "rdseal1:"

// KeySize is the length in bytes of every key (AES-256).
const KeySize = 32

// ErrSealed marks a value that cannot be opened: a malformed or tampered envelope, one sealed
// for another place, or one whose key id is not configured. The value is never guessed.
var ErrSealed = errors.New("sealed value cannot be opened")

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Place is where a sealed value lives; it is bound into the envelope as associated data.
// Person, when not 0, is the account a value belongs to (a draft), so it opens for no one else.
type Place struct {
	Table, Column, RunUUID string
	Person                 int64
}

func (p Place) associatedData() []byte {
	ad := p.Table + "\x00" + p.Column + "\x00" + p.RunUUID
	if p.Person != 0 {
		ad += "\x00" + strconv.FormatInt(p.Person, 10)
	}
	return []byte(ad)
}

// Keyring holds the keys: the first seals, all open. A nil *Keyring seals nothing and opens
// only cleartext.
type Keyring struct {
	active string
	aeads  map[string]cipher.AEAD
	order  []string
}

// Parse reads keys written as "id:base64key" separated by commas or newlines (blank lines and
// lines starting with # are skipped). The first key seals. Problems name the entry, never the
// key material.
func Parse(spec string) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	sc := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(spec, ",", "\n")))
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		id, b64, ok := strings.Cut(line, ":")
		if !ok || !keyIDPattern.MatchString(id) {
			return nil, fmt.Errorf("seal: key %d: want id:base64 with an id of 1-32 letters, digits, _ or -", n)
		}
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("seal: key %q is listed twice", id)
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(raw) != KeySize {
			return nil, fmt.Errorf("seal: key %q: want %d bytes in standard base64", id, KeySize)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("seal: key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("seal: key %q: %w", id, err)
		}
		k.aeads[id] = aead
		k.order = append(k.order, id)
	}
	if len(k.order) == 0 {
		return nil, errors.New("seal: no key given")
	}
	k.active = k.order[0]
	return k, nil
}

// FromEnv returns the keyring configured by RUNSDESK_KEYS, else by the file RUNSDESK_KEYS_FILE
// names, else nil (state is stored in clear). getenv is os.Getenv or a test's lookup.
func FromEnv(getenv func(string) string) (*Keyring, error) {
	if spec := getenv("RUNSDESK_KEYS"); spec != "" {
		k, err := Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("RUNSDESK_KEYS: %w", err)
		}
		return k, nil
	}
	path := getenv("RUNSDESK_KEYS_FILE")
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("RUNSDESK_KEYS_FILE: %w", err)
	}
	k, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("RUNSDESK_KEYS_FILE %s: %w", path, err)
	}
	return k, nil
}

// Generate returns a new random key as a line for RUNSDESK_KEYS: "id:base64key".
func Generate(id string) (string, error) {
	if !keyIDPattern.MatchString(id) {
		return "", fmt.Errorf("seal: key id %q: want 1-32 letters, digits, _ or -", id)
	}
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("seal: generate key: %w", err)
	}
	return id + ":" + base64.StdEncoding.EncodeToString(raw), nil
}

// Active is the id of the key that seals ("" for a nil keyring).
func (k *Keyring) Active() string {
	if k == nil {
		return ""
	}
	return k.active
}

// Has reports whether k holds the key id (false for a nil keyring).
func (k *Keyring) Has(id string) bool {
	if k == nil {
		return false
	}
	_, ok := k.aeads[id]
	return ok
}

// Seal returns plain sealed for p with the active key. "" stays "", and a nil keyring
// returns plain unchanged (cleartext).
func (k *Keyring) Seal(plain string, p Place) (string, error) {
	if k == nil || plain == "" {
		return plain, nil
	}
	aead := k.aeads[k.active]
	buf := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("seal: nonce: %w", err)
	}
	buf = aead.Seal(buf, buf, []byte(plain), p.associatedData())
	return Prefix + k.active + ":" + base64.RawURLEncoding.EncodeToString(buf), nil
}

// Open returns the plaintext of stored, a value read from p: cleartext (no Prefix) is
// returned as is; an envelope opens only with its key and only for p, else ErrSealed.
func (k *Keyring) Open(stored string, p Place) (string, error) {
	rest, ok := strings.CutPrefix(stored, Prefix)
	if !ok {
		return stored, nil
	}
	id, b64, ok := strings.Cut(rest, ":")
	if !ok || !keyIDPattern.MatchString(id) {
		return "", fmt.Errorf("%w: malformed envelope", ErrSealed)
	}
	if k == nil {
		return "", fmt.Errorf("%w: sealed with key %q but no keys are configured", ErrSealed, id)
	}
	aead, ok := k.aeads[id]
	if !ok {
		return "", fmt.Errorf("%w: key %q is not configured", ErrSealed, id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return "", fmt.Errorf("%w: malformed envelope", ErrSealed)
	}
	nonce, body := raw[:aead.NonceSize()], raw[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, body, p.associatedData())
	if err != nil {
		return "", fmt.Errorf("%w: authentication failed (tampered, or sealed for another place)", ErrSealed)
	}
	return string(plain), nil
}

// KeyID is the id of the key stored was sealed with, "" for cleartext or a malformed value.
func KeyID(stored string) string {
	rest, ok := strings.CutPrefix(stored, Prefix)
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}

// Current reports whether stored needs no re-sealing under k: "" always; otherwise it is
// sealed with k's active key (cleartext is current only for a nil keyring).
func (k *Keyring) Current(stored string) bool {
	if stored == "" {
		return true
	}
	if k == nil {
		return !strings.HasPrefix(stored, Prefix)
	}
	return KeyID(stored) == k.active
}
