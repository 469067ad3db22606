package db

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/seal"
)

func keyring(t testing.TB, ids ...string) *seal.Keyring {
	t.Helper()
	var lines []string
	for _, id := range ids {
		l, err := seal.Generate(id)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	k := keyringFromLines(t, lines...)
	ringLines[k] = strings.Join(lines, ",")
	return k
}

// rawPayloads reads run uid's two payload columns as stored.
func rawPayloads(t testing.TB, s *Store, uid int64) (state, request string) {
	t.Helper()
	if err := s.db.QueryRow(`SELECT suspended_state, queued_request FROM tx_nrllm_agentrun WHERE uid = ?`, uid).
		Scan(&state, &request); err != nil {
		t.Fatal(err)
	}
	return state, request
}

const secretState = `{"messages":[{"role":"user","content":"card 4111 1111 1111 1111"}]}`

func TestSealedAtRest(t *testing.T) {
	plain, pool := newStore(t)
	s := New(pool, WithKeys(keyring(t, "k1")))
	r := mustCreate(t, s, runtime.NewRun{ConfigurationUID: 1, ConfigurationIdentifier: "cfg", BeUser: 7,
		QueuedRequest: `{"prompt":"card 4111"}`, Lease: lease("w:1", t0)})
	if _, rq := rawPayloads(t, s, r.UID); !strings.HasPrefix(rq, seal.Prefix+"k1:") || strings.Contains(rq, "4111") {
		t.Fatalf("queued_request stored as %q: want an envelope", rq)
	}
	if err := s.Checkpoint(t.Context(), r.UID, lease("w:1", t0), `{"step":1}`, `{"prompt":"card 4111","n":1}`); err != nil {
		t.Fatal(err)
	}
	st1, rq1 := rawPayloads(t, s, r.UID)
	if !strings.HasPrefix(st1, seal.Prefix) || !strings.HasPrefix(rq1, seal.Prefix) {
		t.Fatalf("checkpoint stored %q, %q: want envelopes", st1, rq1)
	}
	sp := runtime.Suspension{Status: runtime.StatusWaitingApproval, State: secretState, Tools: []string{"refund"}}
	if err := s.Suspend(t.Context(), r.UID, "w:1", sp, t0+1); err != nil {
		t.Fatal(err)
	}
	st, _ := rawPayloads(t, s, r.UID)
	if !strings.HasPrefix(st, seal.Prefix) || strings.Contains(st, "4111") {
		t.Fatalf("suspended_state stored as %q: want an envelope", st)
	}
	read, err := s.FindByUUID(t.Context(), r.UUID)
	if err != nil || read.SuspendedState != secretState {
		t.Fatalf("FindByUUID: state %q, %v; want the plaintext", read.SuspendedState, err)
	}
	if stateStamp(read) != sha256Hex(st) {
		t.Fatalf("StateStamp %q is not the digest of the stored envelope", read.StateStamp)
	}
	listed, err := s.ListWaiting(t.Context(), runtime.WaitingQuery{Limit: 10})
	if err != nil || len(listed) != 1 || listed[0].SuspendedState != secretState {
		t.Fatalf("ListWaiting: %+v, %v; want the plaintext", listed, err)
	}
	if got := mustFind(t, plain, r.UID); got.SuspendedState != st {
		t.Fatalf("a Store without keys read %q, want the envelope left as stored", got.SuspendedState)
	}
	if _, err := runtime.DecodeState(mustFind(t, plain, r.UID).SuspendedState); err == nil ||
		!strings.Contains(err.Error(), "does not open") {
		t.Fatalf("DecodeState of an unopened envelope: %v; want corrupt state that says why", err)
	}
	run, _, err := s.Commit(t.Context(), resumeClaim(read, "resume:1", "k-1"))
	if err != nil {
		t.Fatalf("ClaimForResume over a sealed state: %v", err)
	}
	if run.QueuedRequest != `{"resume":true}` {
		t.Fatalf("claimed run's request %q", run.QueuedRequest)
	}
	if _, rq := rawPayloads(t, s, r.UID); !strings.HasPrefix(rq, seal.Prefix) || strings.Contains(rq, "resume") {
		t.Fatalf("continuation stored as %q: want an envelope", rq)
	}
	if got := mustFind(t, s, r.UID); got.QueuedRequest != `{"resume":true}` || got.SuspendedState != secretState {
		t.Fatalf("after the claim: %q, %q", got.QueuedRequest, got.SuspendedState)
	}
}

func TestSealedValueMovedOrTamperedIsRefused(t *testing.T) {
	_, pool := newStore(t)
	s := New(pool, WithKeys(keyring(t, "k1")))
	a := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
	b := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "b")
	stA, _ := rawPayloads(t, s, a.UID)
	flipped := []byte(stA)
	flipped[len(flipped)-3] ^= 0x01
	for name, c := range map[string]struct {
		sql  string
		args []any
		read func(runtime.Run) string
	}{
		"moved to another run": {`UPDATE tx_nrllm_agentrun SET suspended_state = ? WHERE uid = ?`, []any{stA, b.UID},
			func(r runtime.Run) string { return r.SuspendedState }},
		"swapped into queued_request": {`UPDATE tx_nrllm_agentrun SET queued_request = ? WHERE uid = ?`, []any{stA, a.UID},
			func(r runtime.Run) string { return r.QueuedRequest }},
		"tampered": {`UPDATE tx_nrllm_agentrun SET suspended_state = ? WHERE uid = ?`, []any{string(flipped), a.UID},
			func(r runtime.Run) string { return r.SuspendedState }},
	} {
		if _, err := pool.Exec(c.sql, c.args...); err != nil {
			t.Fatal(err)
		}
		uid := c.args[1].(int64)
		got := c.read(mustFind(t, New(pool, WithKeys(s.keys)), uid))
		if !strings.HasPrefix(got, seal.Prefix) {
			t.Fatalf("%s: read %q; want the envelope left unopened", name, got)
		}
		if _, err := runtime.DecodeState(got); err == nil {
			t.Fatalf("%s: DecodeState accepted it", name)
		}
		if _, err := runtime.DecodePause(got); err == nil {
			t.Fatalf("%s: DecodePause accepted it", name)
		}
	}
}

func TestLegacyCleartextThenRotation(t *testing.T) {
	plain, pool := newStore(t)
	legacy := waitingRun(t, plain, runtime.StatusWaitingInput, t0+1, "ask")
	old := keyring(t, "old")
	sealedOld := waitingRun(t, New(pool, WithKeys(old)), runtime.StatusWaitingApproval, t0+1, "a")
	oldSt, _ := rawPayloads(t, plain, sealedOld.UID)

	if _, err := New(pool).Reseal(t.Context(), sealedSuspendedState, 0, 10, true); err == nil {
		t.Fatal("Reseal without keys must be refused")
	}
	newKey := keyring(t, "new")
	both := New(pool, WithKeys(mustJoin(t, newKey, old)))
	if got := mustFind(t, both, legacy.UID); got.SuspendedState != legacy.SuspendedState {
		t.Fatalf("legacy cleartext read as %q, want it verbatim", got.SuspendedState)
	}
	if kept := resealOneByOne(t, both, false, sealedSuspendedState, sealedQueuedRequest); kept.Resealed != 2 || kept.Clear != 2 {
		t.Fatalf("without --seal-clear: %+v; want the old-key run's two values re-sealed and the cleartext run's two left", kept)
	}
	if st, _ := rawPayloads(t, plain, legacy.UID); st != legacy.SuspendedState {
		t.Fatalf("cleartext sealed without --seal-clear: %.30q", st)
	}
	total := resealOneByOne(t, both, true, sealedSuspendedState, sealedQueuedRequest)
	if total.Resealed != 2 || total.Current != 2 {
		t.Fatalf("with --seal-clear: %+v; want the cleartext run's two values sealed, the other's current", total)
	}
	for _, r := range []runtime.Run{legacy, sealedOld} {
		st, rq := rawPayloads(t, plain, r.UID)
		if seal.KeyID(st) != "new" || seal.KeyID(rq) != "new" {
			t.Fatalf("run %d after rotation: %.30q %.30q; want both sealed with the new key", r.UID, st, rq)
		}
		if got := mustFind(t, New(pool, WithKeys(newKey)), r.UID); got.SuspendedState != r.SuspendedState {
			t.Fatalf("run %d under the new key alone: %q, want %q", r.UID, got.SuspendedState, r.SuspendedState)
		}
	}
	if st, _ := rawPayloads(t, plain, sealedOld.UID); st == oldSt {
		t.Fatal("the old envelope was kept")
	}
	again := resealOneByOne(t, both, true, sealedSuspendedState, sealedQueuedRequest)
	if again.Resealed != 0 || again.Current != 4 {
		t.Fatalf("second rotation: %+v; want everything current", again)
	}
	if _, err := pool.Exec(`UPDATE tx_nrllm_agentrun SET suspended_state = CONCAT(?, 'garbage') WHERE uid = ?`, seal.Prefix+"new:", legacy.UID); err != nil {
		t.Fatal(err)
	}
	bad, err := both.Reseal(t.Context(), sealedSuspendedState, 0, 10, true)
	if err != nil || len(bad.Unopenable) != 1 || bad.Unopenable[0] != legacy.UUID {
		t.Fatalf("rotation over a corrupt envelope: %+v, %v; want it named and left", bad, err)
	}
}

// resealOneByOne re-seals columns with s one row per batch (cleartext too with sealClear)
// and returns what it did over all of them.
func resealOneByOne(t *testing.T, s *Store, sealClear bool, columns ...SealedColumn) ResealBatch {
	t.Helper()
	var total ResealBatch
	for _, c := range columns {
		b, err := s.ResealAll(t.Context(), c, 1, sealClear, nil)
		if err != nil {
			t.Fatal(err)
		}
		total.Resealed += b.Resealed
		total.Current += b.Current
		total.Clear += b.Clear
		total.Unopenable = append(total.Unopenable, b.Unopenable...)
	}
	return total
}

// mustJoin is the keyring of first's keys followed by rest's: first seals, all open.
func mustJoin(t testing.TB, first, rest *seal.Keyring) *seal.Keyring {
	t.Helper()
	return keyringFromLines(t, ringLines[first], ringLines[rest])
}

// ringLines remembers the RUNSDESK_KEYS text each test keyring was parsed from.
var ringLines = map[*seal.Keyring]string{}

func keyringFromLines(t testing.TB, lines ...string) *seal.Keyring {
	t.Helper()
	k, err := seal.Parse(strings.Join(lines, ","))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestRotationUnderConcurrentDecisions re-seals while every waiting run is claimed by racing
// deciders: each run is claimed exactly once, and no claim's continuation is lost.
func TestRotationUnderConcurrentDecisions(t *testing.T) {
	_, pool := newStore(t)
	pool.SetMaxOpenConns(racers + 4)
	pool.SetMaxIdleConns(racers + 4)
	old, newKey := keyring(t, "old"), keyring(t, "new")
	writer := New(pool, WithKeys(old))
	const runs = 40
	waiting := make([]runtime.Run, runs)
	for i := range waiting {
		waiting[i] = waitingRun(t, writer, runtime.StatusWaitingApproval, t0+1, "a")
	}
	rotated := mustJoin(t, newKey, old)
	rotator := New(pool, WithKeys(rotated))
	var wg sync.WaitGroup
	errs := make(chan error, runs*4+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for pass := 0; pass < 20; pass++ {
			for _, c := range []SealedColumn{sealedSuspendedState, sealedQueuedRequest} {
				if _, err := rotator.ResealAll(t.Context(), c, 3, true, nil); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	wins := make([]int, runs)
	var mu sync.Mutex
	for i, r := range waiting {
		for j := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				decider := New(pool, WithKeys(rotated))
				read, err := decider.FindByUUID(t.Context(), r.UUID)
				if err != nil {
					errs <- err
					return
				}
				if !read.Status.Waiting() {
					return
				}
				c := resumeClaim(read, fmt.Sprintf("resume:%d:%d", i, j), fmt.Sprintf("k%d-%d", i, j))
				c.Resume = &runtime.Resume{Lease: c.Resume.Lease, Continuation: fmt.Sprintf(`{"resume":%d}`, j)}
				_, _, err = decider.Commit(t.Context(), c)
				switch {
				case err == nil:
					mu.Lock()
					wins[i]++
					mu.Unlock()
				case !errors.Is(err, runtime.ErrGuard):
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, r := range waiting {
		got := mustFind(t, rotator, r.UID)
		if wins[i] != 1 || got.Status != runtime.StatusRunning || !strings.HasPrefix(got.QueuedRequest, `{"resume":`) {
			t.Fatalf("run %d: %d winners, status %s, request %q; want one claim and its continuation", i, wins[i], got.Status, got.QueuedRequest)
		}
		if n := countRows(t, rotator, `SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`, r.UID); n != 1 {
			t.Fatalf("run %d: %d decisions", i, n)
		}
	}
}

// TestClaimAfterResealWins: a decision read before a rotation re-sealed its run still claims
// it, since only the sealing changed; a state that really changed is still a guard.
func TestClaimAfterResealWins(t *testing.T) {
	_, pool := newStore(t)
	old, newKey := keyring(t, "old"), keyring(t, "new")
	writer := New(pool, WithKeys(old))
	r := waitingRun(t, writer, runtime.StatusWaitingApproval, t0+1, "a")
	other := waitingRun(t, writer, runtime.StatusWaitingApproval, t0+1, "a")
	rotated := New(pool, WithKeys(mustJoin(t, newKey, old)))
	read := mustFind(t, rotated, r.UID)
	readOther := mustFind(t, rotated, other.UID)
	if b, err := rotated.Reseal(t.Context(), sealedSuspendedState, 0, 10, true); err != nil || b.Resealed != 2 {
		t.Fatalf("Reseal: %+v, %v", b, err)
	}
	if _, _, err := rotated.Commit(t.Context(), resumeClaim(read, "resume:1", "k-1")); err != nil {
		t.Fatalf("claim read before the re-seal: %v; want it to win", err)
	}
	if _, err := pool.Exec(`UPDATE tx_nrllm_agentrun SET suspended_state = ? WHERE uid = ?`,
		mustSeal(t, rotated, `{"messages":[],"changed":true}`, other.UUID), other.UID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rotated.Commit(t.Context(), resumeClaim(readOther, "resume:2", "k-2")); !errors.Is(err, runtime.ErrGuard) {
		t.Fatalf("claim over a changed state: %v; want runtime.ErrGuard", err)
	}
}

func mustSeal(t testing.TB, s *Store, plain, uuid string) string {
	t.Helper()
	v, err := s.keys.Seal(plain, sealedSuspendedState.place(uuid, 0))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDraftsSealed: with keys a draft is stored sealed for its person and run; copied to
// another person it does not open, and under a missing key it is refused as
// sealing_key_missing naming the key; a malformed envelope reads as an undecodable draft.
func TestDraftsSealed(t *testing.T) {
	_, pool := newStore(t)
	s := New(pool, WithKeys(keyring(t, "k1")))
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
	typed := url.Values{"input/city": {"card 4111"}}
	if err := s.SaveDraft(t.Context(), draftOf(r, 7, typed)); err != nil {
		t.Fatal(err)
	}
	var raw string
	if err := pool.QueryRow(`SELECT form_values FROM tx_runsdesk_draft WHERE run = ?`, r.UID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, seal.Prefix) || strings.Contains(raw, "4111") {
		t.Fatalf("draft stored as %q: want an envelope", raw)
	}
	if got, err := New(pool, WithKeys(s.keys)).LoadDraft(t.Context(), r.UID, 7, "d1"); err != nil || !reflect.DeepEqual(got.Values, typed) {
		t.Fatalf("LoadDraft = %+v, %v", got, err)
	}
	if _, err := pool.Exec(`INSERT INTO tx_runsdesk_draft (run, be_user, pause_digest, form_values, updated_at) VALUES (?, 8, 'd1', ?, 1)`, r.UID, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadDraft(t.Context(), r.UID, 8, "d1"); !errors.Is(err, runtime.ErrSealingKeyMissing) || strings.Contains(err.Error(), "4111") {
		t.Fatalf("another person's sealed draft: %v; want it refused as sealing_key_missing", err)
	}
	_, err := New(pool, WithKeys(keyring(t, "k2"))).LoadDraft(t.Context(), r.UID, 7, "d1")
	if id, ok := runtime.MissingSealingKey(err); !errors.Is(err, runtime.ErrSealingKeyMissing) || !ok || id != "k1" {
		t.Fatalf("a draft sealed under k1 read with k2 only: %v; want sealing_key_missing naming k1", err)
	}
	if _, err := pool.Exec(`UPDATE tx_runsdesk_draft SET form_values = 'rdseal1:' WHERE run = ? AND be_user = 8`, r.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadDraft(t.Context(), r.UID, 8, "d1"); !errors.Is(err, errDraftUndecodable) {
		t.Fatalf("a malformed envelope: %v; want it refused as undecodable", err)
	}
}

// TestEditedArgumentsSealed: an edited approval's arguments record is stored sealed for its
// run and read back in clear; moved to another run it does not open.
func TestEditedArgumentsSealed(t *testing.T) {
	_, pool := newStore(t)
	s := New(pool, WithKeys(keyring(t, "k1")))
	r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
	c := resumeClaim(mustFind(t, s, r.UID), "resume:1", "k-1")
	c.Decision.Arguments = `[{"callId":"c1","proposed":{"amount":4111}}]`
	if _, _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	var raw string
	if err := pool.QueryRow(`SELECT arguments FROM tx_runsdesk_decision WHERE run = ?`, r.UID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, seal.Prefix) || strings.Contains(raw, "4111") {
		t.Fatalf("arguments stored as %q: want an envelope", raw)
	}
	got, err := New(pool, WithKeys(s.keys)).EditedDecisions(t.Context(), r.UID)
	if err != nil || len(got) != 1 || got[0].Arguments != c.Decision.Arguments {
		t.Fatalf("EditedDecisions = %+v, %v", got, err)
	}
	other := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
	if _, err := pool.Exec(`INSERT INTO tx_runsdesk_decision (run, idempotency_key, kind, approved, decided_by, decided_by_service, crdate, arguments)
		VALUES (?, 'moved', 'approval', 1, 9, '', 1, ?)`, other.UID, raw); err != nil {
		t.Fatal(err)
	}
	moved, err := s.EditedDecisions(t.Context(), other.UID)
	if err != nil || len(moved) != 1 || moved[0].Arguments != raw {
		t.Fatalf("moved record: %+v, %v; want it left as stored (refused by its reader)", moved, err)
	}
}

// TestDecisionReasonSealed: while states are sealed a decision's reason is stored sealed with
// the decision and its audit row says only that one was given; in clear, the audit row keeps
// the text as before.
func TestDecisionReasonSealed(t *testing.T) {
	const reason = "wrong customer, use order B-2"
	for _, sealed := range []bool{true, false} {
		_, pool := newStore(t)
		var opts []Option
		if sealed {
			opts = append(opts, WithKeys(keyring(t, "k1")))
		}
		s := New(pool, opts...)
		r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
		c := resumeClaim(mustFind(t, s, r.UID), "resume:1", "k-1")
		c.Decision.Reason = reason
		c.Audit = &runtime.AuditRecord{Actor: runtime.Actor{UserUID: 7, Name: "ada", Role: runtime.RoleAdmin},
			AuditNote: runtime.AuditNote{Action: "approval", IP: "127.0.0.1", Outcome: "denied", Reason: reason}}
		if _, _, err := s.Commit(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		var stored, audited string
		if err := pool.QueryRow(`SELECT reason FROM tx_runsdesk_decision WHERE run = ?`, r.UID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(`SELECT reason FROM tx_runsdesk_audit WHERE run_uuid = ?`, r.UUID).Scan(&audited); err != nil {
			t.Fatal(err)
		}
		switch {
		case sealed && (!strings.HasPrefix(stored, seal.Prefix) || strings.Contains(stored, "B-2")):
			t.Errorf("sealed: the decision's reason stored as %q, want an envelope", stored)
		case sealed && audited != sealedReasonNote:
			t.Errorf("sealed: the audit row's reason %q, want %q", audited, sealedReasonNote)
		case !sealed && (stored != reason || audited != reason):
			t.Errorf("in clear: decision reason %q, audit reason %q, want the text in both", stored, audited)
		}
	}
}
