package auditchain

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// KeyName is the signer name of the keys `runsdesk audit keygen` makes.
const KeyName = "runsdesk-audit"

// checkpointHeader is the first line of a checkpoint's text; the file of checkpoints is split
// at lines equal to it.
const checkpointHeader = "runsdesk audit chain"

// Checkpoint is a signed statement of the chain's head at a time: sequence, hash, time (unix
// seconds), and Note, the signed note (golang.org/x/mod/sumdb/note) stating them.
type Checkpoint struct {
	Head
	Time int64
	Note string
}

// GenerateKey returns a new ed25519 signing key (for RUNSDESK_AUDIT_KEY) and its verifier key
// (for RUNSDESK_AUDIT_VERIFIER_KEY), both in the note format.
func GenerateKey() (signer, verifier string, err error) {
	skey, vkey, err := note.GenerateKey(rand.Reader, KeyName)
	if err != nil {
		return "", "", fmt.Errorf("auditchain: generate key: %w", err)
	}
	return skey, vkey, nil
}

// SignerFromEnv is the signer of RUNSDESK_AUDIT_KEY, else of the key in the file
// RUNSDESK_AUDIT_KEY_FILE names, else nil (no checkpoints are signed).
func SignerFromEnv(getenv func(string) string) (note.Signer, error) {
	skey, from, err := signingKey(getenv)
	if err != nil || skey == "" {
		return nil, err
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("auditchain: %s: %w", from, err)
	}
	return s, nil
}

// VerifierFromEnv is the verifier of RUNSDESK_AUDIT_VERIFIER_KEY, else the one of the signing
// key (SignerFromEnv), else an error saying that neither is set.
func VerifierFromEnv(getenv func(string) string) (note.Verifier, error) {
	if vkey := strings.TrimSpace(getenv("RUNSDESK_AUDIT_VERIFIER_KEY")); vkey != "" {
		v, err := note.NewVerifier(vkey)
		if err != nil {
			return nil, fmt.Errorf("auditchain: RUNSDESK_AUDIT_VERIFIER_KEY: %w", err)
		}
		return v, nil
	}
	skey, from, err := signingKey(getenv)
	if err != nil {
		return nil, err
	}
	if skey == "" {
		return nil, errors.New("auditchain: no key to check checkpoints with: set RUNSDESK_AUDIT_VERIFIER_KEY (or RUNSDESK_AUDIT_KEY, RUNSDESK_AUDIT_KEY_FILE)")
	}
	vkey, err := verifierKey(skey)
	if err != nil {
		return nil, fmt.Errorf("auditchain: %s: %w", from, err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("auditchain: %s: %w", from, err)
	}
	return v, nil
}

// signingKey is the signing key text and where it came from ("" when none is set).
func signingKey(getenv func(string) string) (key, from string, err error) {
	if k := strings.TrimSpace(getenv("RUNSDESK_AUDIT_KEY")); k != "" {
		return k, "RUNSDESK_AUDIT_KEY", nil
	}
	path := getenv("RUNSDESK_AUDIT_KEY_FILE")
	if path == "" {
		return "", "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("auditchain: RUNSDESK_AUDIT_KEY_FILE: %w", err)
	}
	return strings.TrimSpace(string(b)), "RUNSDESK_AUDIT_KEY_FILE " + path, nil
}

// verifierKey derives the verifier key of a note signing key
// ("PRIVATE+KEY+name+hash+base64(algorithm ‖ ed25519 seed)").
func verifierKey(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" {
		return "", errors.New("not a note signing key (PRIVATE+KEY+…)")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", errors.New("malformed ed25519 signing key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(parts[2], pub)
	if err != nil {
		return "", err
	}
	if strings.SplitN(vkey, "+", 3)[1] != parts[3] {
		return "", errors.New("signing key's hash does not match its key")
	}
	return vkey, nil
}

// Sign returns the checkpoint of head at t, signed by s.
func Sign(head Head, t time.Time, s note.Signer) (Checkpoint, error) {
	text := fmt.Sprintf("%s\n%d\n%s\n%d\n", checkpointHeader, head.Seq,
		base64.StdEncoding.EncodeToString(head.Hash[:]), t.Unix())
	msg, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("auditchain: sign checkpoint %d: %w", head.Seq, err)
	}
	return Checkpoint{Head: head, Time: t.Unix(), Note: string(msg)}, nil
}

// Open checks the signature of a checkpoint's note with v and returns what it states.
func Open(msg string, v note.Verifier) (Checkpoint, error) {
	n, err := note.Open([]byte(msg), note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint signature: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) != 4 || lines[0] != checkpointHeader {
		return Checkpoint{}, errors.New("checkpoint: not a runsdesk audit chain checkpoint")
	}
	var c Checkpoint
	seq, err1 := strconv.ParseInt(lines[1], 10, 64)
	hash, err2 := base64.StdEncoding.DecodeString(lines[2])
	at, err3 := strconv.ParseInt(lines[3], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil || len(hash) != len(c.Hash) || seq < 1 {
		return Checkpoint{}, fmt.Errorf("checkpoint: malformed text %q", n.Text)
	}
	c.Seq, c.Time, c.Note = seq, at, msg
	copy(c.Hash[:], hash)
	return c, nil
}

// SplitNotes splits the text of a checkpoint file (notes appended one after another) into
// its notes.
func SplitNotes(file string) []string {
	var notes []string
	var cur strings.Builder
	for line := range strings.Lines(file) {
		if strings.TrimSuffix(line, "\n") == checkpointHeader && cur.Len() > 0 {
			notes = append(notes, cur.String())
			cur.Reset()
		}
		cur.WriteString(line)
	}
	if strings.TrimSpace(cur.String()) != "" {
		notes = append(notes, cur.String())
	}
	return notes
}

// AppendFile appends c's note to the file at path, creating it (mode 0600) when missing.
func AppendFile(path string, c Checkpoint) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("auditchain: checkpoint file: %w", err)
	}
	_, err = f.WriteString(c.Note)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("auditchain: checkpoint file %s: %w", path, err)
	}
	return nil
}
