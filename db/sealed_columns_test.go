package db

import (
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/seal"
)

// sealedFixture is one value in every sealed column, written by the Store's own writers.
type sealedFixture struct {
	ran, decided, drafted, finished runtime.Run
	draft                           url.Values
	decision                        runtime.Decision
	output, comment                 string
	totpUser                        int64
	totpSecret                      string
}

// fillSealedColumns writes, with s, a value into every column of SealedColumns: a run's
// state and request and its executed call, an edited approval with a reason, a draft, and a
// finished run's output, a comment.
func fillSealedColumns(t *testing.T, s *Store) sealedFixture {
	t.Helper()
	var f sealedFixture
	f.ran = runningRun(t, s, "w:1")
	if err := s.Checkpoint(t.Context(), f.ran.UID, lease("w:1", t0), `{"messages":["ran"]}`, `{"prompt":"ran"}`, stepEvents(f.ran.UID)...); err != nil {
		t.Fatal(err)
	}
	decided := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
	c := resumeClaim(mustFind(t, s, decided.UID), "resume:1", "k-1")
	c.Decision.Arguments = `[{"callId":"c1","proposed":{"amount":4111},"approved":{"amount":41}}]`
	c.Decision.Reason = "halve it"
	c.Event.Content = &runtime.KeptContent{Privacy: runtime.PrivacyRedacted, Content: runtime.EventContent{Note: "halve it"}}
	if _, _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	f.decided, f.decision = mustFind(t, s, decided.UID), c.Decision
	f.drafted = waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	f.draft = url.Values{"input/city": {"Oslo"}}
	if err := s.SaveDraft(t.Context(), draftOf(f.drafted, 7, f.draft)); err != nil {
		t.Fatal(err)
	}
	f.comment = "call the customer first"
	if _, _, err := s.Commit(t.Context(), runtime.CommitPlan{Read: mustFind(t, s, f.drafted.UID), Now: t0 + 1,
		Comment: &runtime.Comment{Author: 7, IdempotencyKey: "c-1", Body: f.comment},
		Event:   runtime.NewEvent{Kind: runtime.EventComment, Payload: []byte(`{"by":7}`)}}); err != nil {
		t.Fatal(err)
	}
	f.finished, f.output = runningRun(t, s, "w:2"), "the answer\nin two lines"
	if err := s.Finish(t.Context(), f.finished.UID, "w:2", runtime.Settlement{Status: runtime.StatusCompleted, Reason: runtime.ReasonCompleted, Output: f.output}, t0+2); err != nil {
		t.Fatal(err)
	}
	f.ran = mustFind(t, s, f.ran.UID)
	f.drafted = mustFind(t, s, f.drafted.UID)
	f.totpUser, f.totpSecret = fillTOTPSecret(t, s)
	return f
}

// fillTOTPSecret stores a TOTP secret for a person no other fixture has: through Factors.Begin
// with keys; without them (Begin refuses) as a cleartext row, the legacy value rotation must
// leave alone.
func fillTOTPSecret(t *testing.T, s *Store) (int64, string) {
	t.Helper()
	var uid int64
	if err := s.db.QueryRowContext(t.Context(), `SELECT COALESCE(MAX(be_user), 100) + 1 FROM tx_runsdesk_totp`).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	secret := "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	if s.keys == nil {
		if _, err := s.db.ExecContext(t.Context(), `INSERT INTO tx_runsdesk_totp (be_user, secret) VALUES (?, ?)`, uid, secret); err != nil {
			t.Fatal(err)
		}
		return uid, secret
	}
	if err := NewFactors(s.db, s.keys, nil).Begin(t.Context(), uid, secret); err != nil {
		t.Fatal(err)
	}
	return uid, secret
}

// wantFixtureReads checks that s reads every value of f as it was written.
func wantFixtureReads(t *testing.T, s *Store, f sealedFixture) {
	t.Helper()
	for _, r := range []runtime.Run{f.ran, f.decided, f.drafted} {
		got := mustFind(t, s, r.UID)
		if got.SuspendedState != r.SuspendedState || got.QueuedRequest != r.QueuedRequest {
			t.Fatalf("run %d reads %.40q / %.40q, want %.40q / %.40q", r.UID, got.SuspendedState, got.QueuedRequest, r.SuspendedState, r.QueuedRequest)
		}
	}
	wantCalls(t, s, f.ran.UID, 0)
	for _, r := range []runtime.Run{f.ran, f.decided} {
		kept, err := s.EventContents(t.Context(), r.UID, r.UUID)
		if err != nil || len(kept) != 1 || kept[0].SealedWith != "" || (kept[0].Kept.Content.Result != "found b" && kept[0].Kept.Content.Note != "halve it") {
			t.Fatalf("EventContents of run %d = %+v, %v; want the one content written", r.UID, kept, err)
		}
	}
	edited, err := s.EditedDecisions(t.Context(), f.decided.UID)
	if err != nil || len(edited) != 1 || edited[0].Arguments != f.decision.Arguments {
		t.Fatalf("EditedDecisions = %+v, %v; want the proposed/approved record", edited, err)
	}
	reasoned, err := s.ReasonedDecisions(t.Context(), f.decided.UID)
	if err != nil || len(reasoned) != 1 || reasoned[0].Reason != f.decision.Reason {
		t.Fatalf("ReasonedDecisions = %+v, %v; want the reason", reasoned, err)
	}
	d, err := s.LoadDraft(t.Context(), f.drafted.UID, 7, "d1")
	if err != nil || !reflect.DeepEqual(d.Values, f.draft) {
		t.Fatalf("LoadDraft = %+v, %v; want %v", d, err, f.draft)
	}
	comments, err := s.Comments(t.Context(), f.drafted.UID, f.drafted.UUID)
	if err != nil || len(comments) != 1 || comments[0].Body != f.comment || comments[0].SealedWith != "" {
		t.Fatalf("Comments = %+v, %v; want %q", comments, err, f.comment)
	}
	out, ok, err := s.RunOutput(t.Context(), f.finished.UID, f.finished.UUID)
	if err != nil || !ok || out.Text != f.output || out.Finished != t0+2 {
		t.Fatalf("RunOutput = %+v, %v, %v; want %q finished at %d", out, ok, err, f.output, t0+2)
	}
	factor, err := NewFactors(s.db, s.keys, nil).Factor(t.Context(), f.totpUser)
	if err != nil || factor.Secret != f.totpSecret {
		t.Fatalf("Factor = %+v, %v; want the secret written", factor, err)
	}
}

// keyIDCounts counts the non-empty values of column by key id ("" for cleartext), read from
// the column itself.
func keyIDCounts(t *testing.T, s *Store, c SealedColumn) map[string]int {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(), `SELECT `+c.Column+` FROM `+c.Table+` WHERE `+c.Column+` <> '' ORDER BY uid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out[seal.KeyID(v)]++
	}
	return out
}

// TestRotationCoversEverySealedColumn: after keys rotate from k1 to k2 every value of every
// registered column (drafts, edited approvals, reasons, calls, run state) opens with k2 alone;
// cleartext rows written before keys were set are left in clear until --seal-clear seals them.
func TestRotationCoversEverySealedColumn(t *testing.T) {
	plain, pool := newStore(t)
	legacy := fillSealedColumns(t, plain)
	k1 := keyring(t, "k1")
	sealed := fillSealedColumns(t, New(pool, WithKeys(k1)))
	before := map[string]map[string]int{}
	for _, c := range SealedColumns() {
		before[c.Name()] = keyIDCounts(t, plain, c)
		if got := before[c.Name()]; len(got) != 2 || got[""] == 0 || got["k1"] == 0 {
			t.Fatalf("%s before rotation: key ids %v; want cleartext and k1 values (the fixture must fill every registered column)", c.Name(), got)
		}
	}
	k2 := keyring(t, "k2")
	both := New(pool, WithKeys(mustJoin(t, k2, k1)))
	for _, c := range SealedColumns() {
		b, err := both.ResealAll(t.Context(), c, 1, false, nil)
		want := before[c.Name()]
		if err != nil || b.Resealed != want["k1"] || b.Clear != want[""] || len(b.Unopenable) != 0 {
			t.Fatalf("rotate %s: %+v, %v; want the k1 values re-sealed and the cleartext ones left (%v)", c.Name(), b, err, want)
		}
	}
	onlyK2 := New(pool, WithKeys(k2))
	wantFixtureReads(t, onlyK2, sealed)
	wantFixtureReads(t, onlyK2, legacy)
	for _, c := range SealedColumns() {
		want := before[c.Name()]
		if got := keyIDCounts(t, plain, c); !reflect.DeepEqual(got, map[string]int{"": want[""], "k2": want["k1"]}) {
			t.Fatalf("%s after rotation: key ids %v; want the cleartext values left and the k1 ones under k2", c.Name(), got)
		}
		b, err := onlyK2.ResealAll(t.Context(), c, 200, true, nil)
		if err != nil || b.Resealed != want[""] || b.Current != want["k1"] {
			t.Fatalf("--seal-clear %s: %+v, %v; want the cleartext values sealed", c.Name(), b, err)
		}
		if got := keyIDCounts(t, plain, c); !reflect.DeepEqual(got, map[string]int{"k2": want[""] + want["k1"]}) {
			t.Fatalf("%s after --seal-clear: key ids %v; want every value under k2", c.Name(), got)
		}
	}
	wantFixtureReads(t, onlyK2, sealed)
	wantFixtureReads(t, onlyK2, legacy)
}

// TestSealedKeyCounts: the counts per column and key id come from the key-id columns, and
// MissingKeys names those a key set lacks.
func TestSealedKeyCounts(t *testing.T) {
	_, pool := newStore(t)
	k1 := keyring(t, "k1")
	s := New(pool, WithKeys(k1))
	fillSealedColumns(t, s)
	counts, err := s.SealedKeyCounts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != len(SealedColumns()) {
		t.Fatalf("%d counts, want one per sealed column: %+v", len(counts), counts)
	}
	for i, c := range SealedColumns() {
		want := int64(keyIDCounts(t, s, c)["k1"])
		if counts[i] != (KeyCount{Column: c, KeyID: "k1", Rows: want}) || want == 0 {
			t.Fatalf("count %d: %+v; want %d rows of %s under k1", i, counts[i], want, c.Name())
		}
	}
	if m := MissingKeys(counts, k1); len(m) != 0 {
		t.Fatalf("MissingKeys with k1 configured: %+v", m)
	}
	if m := MissingKeys(counts, keyring(t, "k2")); len(m) != len(counts) {
		t.Fatalf("MissingKeys without k1: %+v; want every count", m)
	}
	var plan string
	if err := pool.QueryRow(`EXPLAIN SELECT suspended_state_key_id, COUNT(*) FROM tx_nrllm_agentrun FORCE INDEX (suspended_state_key_id)
		WHERE suspended_state_key_id IS NOT NULL GROUP BY suspended_state_key_id`).Scan(new(any), new(any), new(any), new(any), new(any), &plan, new(any), new(any), new(any), new(any)); err != nil {
		t.Fatal(err)
	}
	if plan != "suspended_state_key_id" {
		t.Fatalf("the count reads key %q, want the key-id index", plan)
	}
}

// TestSealedColumnsRegistered: every column that holds an envelope after every writer ran is
// in SealedColumns, and no place is made outside the registry (a new sealed column must add a
// registry row to be sealed at all).
func TestSealedColumnsRegistered(t *testing.T) {
	_, pool := newStore(t)
	s := New(pool, WithKeys(keyring(t, "k1")))
	fillSealedColumns(t, s)
	registered := map[string]bool{}
	for _, c := range SealedColumns() {
		table, column, _ := strings.Cut(c.Name(), ".")
		registered[ownTable(table)+"."+column] = true
	}
	rows, err := pool.Query(`SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = DATABASE() AND data_type IN ('char', 'varchar', 'text', 'mediumtext', 'longtext', 'blob', 'mediumblob', 'longblob')`)
	if err != nil {
		t.Fatal(err)
	}
	var columns [][2]string
	for rows.Next() {
		var c [2]string
		if err := rows.Scan(&c[0], &c[1]); err != nil {
			t.Fatal(err)
		}
		columns = append(columns, c)
	}
	rows.Close()
	for _, c := range columns {
		if siteTable(c[0]) {
			continue
		}
		var n int
		if err := pool.QueryRow("SELECT COUNT(*) FROM `"+c[0]+"` WHERE LEFT(`"+c[1]+"`, ?) = ?", len(seal.Prefix), seal.Prefix).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 && !registered[c[0]+"."+c[1]] {
			t.Errorf("%s.%s holds %d sealed value(s) but is not in SealedColumns", c[0], c[1], n)
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "sealed_columns.go" {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "seal.Place{") {
			t.Errorf("%s makes a seal.Place itself; take it from a SealedColumn", name)
		}
	}
}
