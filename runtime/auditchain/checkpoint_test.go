package auditchain

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// TestCanonicalSortedAndStable pins the canonical JSON of a row: keys in byte order, the
// digest in hex, the sequence included.
func TestCanonicalSortedAndStable(t *testing.T) {
	r := AuditRow(7, 1700000000, 3, "ada <admin>", "192.0.2.1", "approve", "u-1", "success", Hash{1})
	got := string(r.Canonical(42))
	want := `{"action":"approve","actor_name":"ada \u003cadmin\u003e","actor_uid":3,"content":"0100000000000000000000000000000000000000000000000000000000000000","crdate":1700000000,"ip":"192.0.2.1","outcome":"success","run_uuid":"u-1","seq":42,"table":"tx_runsdesk_audit","uid":7}`
	if got != want {
		t.Errorf("canonical\ngot  %s\nwant %s", got, want)
	}
	if Link(Hash{}, 42, r) == Link(Hash{}, 43, r) {
		t.Error("the link does not cover the sequence")
	}
}

// TestCheckpointSignOpen signs a checkpoint, opens it with the verifier derived from the
// signing key (as verify does without RUNSDESK_AUDIT_VERIFIER_KEY), refuses another key's and
// an edited note, and splits a file of appended notes.
func TestCheckpointSignOpen(t *testing.T) {
	skey, vkey, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RUNSDESK_AUDIT_KEY": skey}
	signer, err := SignerFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	derived, err := VerifierFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if derived.KeyHash() != mustVerifier(t, vkey).KeyHash() {
		t.Fatal("the verifier derived from the signing key differs from keygen's")
	}
	head := Head{Seq: 9, Hash: Hash{9, 9}}
	at := time.Unix(1700000000, 0)
	c, err := Sign(head, at, signer)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Open(c.Note, derived)
	if err != nil || got.Head != head || got.Time != at.Unix() {
		t.Fatalf("Open = %+v, %v; want head %+v at %d", got, err, head, at.Unix())
	}
	if _, err := Open(strings.Replace(c.Note, "\n9\n", "\n8\n", 1), derived); err == nil {
		t.Error("an edited checkpoint opened")
	}
	_, other, _ := GenerateKey()
	if _, err := Open(c.Note, mustVerifier(t, other)); err == nil {
		t.Error("a checkpoint opened with another desk's key")
	}
	c2, _ := Sign(Head{Seq: 10}, at, signer)
	if notes := SplitNotes(c.Note + c2.Note); len(notes) != 2 || notes[0] != c.Note || notes[1] != c2.Note {
		t.Errorf("SplitNotes = %q", notes)
	}
	if _, err := VerifierFromEnv(func(string) string { return "" }); err == nil {
		t.Error("VerifierFromEnv without any key succeeded")
	}
}

func mustVerifier(t *testing.T, vkey string) note.Verifier {
	t.Helper()
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
