package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"runsdesk/runtime"
	"runsdesk/runtime/auditchain"
)

// chainFixture is a store whose audit and decision rows were written an hour ago, with a
// chainer (lag 5 s) signing a checkpoint at every pass, and the verifier of its key.
type chainFixture struct {
	s        *Store
	pool     *sql.DB
	chainer  *auditchain.Chainer
	verifier note.Verifier
	now      time.Time
}

func newChainFixture(t *testing.T) *chainFixture {
	t.Helper()
	s, pool := newStore(t)
	skey, vkey, err := auditchain.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	fx := &chainFixture{s: s, pool: pool, verifier: verifier, now: time.Now()}
	fx.chainer = auditchain.New(auditchain.Config{Store: s, Signer: signer, CheckpointInterval: time.Nanosecond,
		Now: func() time.Time { return fx.now }})
	return fx
}

// write records n audit rows and n decision rows (with arguments and a reason) at at.
func (fx *chainFixture) write(t *testing.T, n int, at time.Time) {
	t.Helper()
	ctx := context.Background()
	a := NewAudit(fx.pool, func() time.Time { return at })
	for i := range n {
		if err := a.Record(ctx, runtime.Actor{UserUID: int64(i + 1), Name: fmt.Sprintf("user%d", i)}, "192.0.2.1",
			"approve", newUUID(), "success", fmt.Sprintf("reason %d", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := fx.pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_decision
			(run, idempotency_key, kind, approved, decided_by, crdate, arguments, reason) VALUES (?, ?, 'approval', 1, ?, ?, ?, ?)`,
			i+1, newUUID(), i+1, at.Unix(), `[{"call":"c1"}]`, fmt.Sprintf("because %d", i)); err != nil {
			t.Fatal(err)
		}
	}
}

// pass runs one chainer pass.
func (fx *chainFixture) pass(t *testing.T) int {
	t.Helper()
	n, _, err := fx.chainer.Pass(context.Background())
	if err != nil {
		t.Fatalf("chain pass: %v", err)
	}
	return n
}

func (fx *chainFixture) verify(t *testing.T, opts auditchain.Options) auditchain.Report {
	t.Helper()
	if opts.GapCutoff == 0 {
		opts.GapCutoff = fx.now.Add(-2 * auditchain.DefaultLag).Unix()
	}
	rep, err := auditchain.Verify(context.Background(), fx.s, fx.verifier, opts)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return rep
}

func (fx *chainFixture) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := fx.pool.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestChainContentDigest checks the digests the database takes when a row is inserted: the
// reason of an audit row, the arguments and reason of a decision row (0045_audit_chain.sql),
// kept when retention clears the content.
func TestChainContentDigest(t *testing.T) {
	fx := newChainFixture(t)
	fx.write(t, 1, fx.now.Add(-time.Hour))
	hexSum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	var audit, decision []byte
	if err := fx.pool.QueryRow(`SELECT content_digest FROM tx_runsdesk_audit`).Scan(&audit); err != nil {
		t.Fatal(err)
	}
	if got, want := hex.EncodeToString(audit), hexSum("reason 0"); got != want {
		t.Errorf("audit digest %s, want SHA-256 of the reason %s", got, want)
	}
	fx.exec(t, `UPDATE tx_runsdesk_decision SET arguments = '', reason = ''`)
	if err := fx.pool.QueryRow(`SELECT content_digest FROM tx_runsdesk_decision`).Scan(&decision); err != nil {
		t.Fatal(err)
	}
	if got, want := hex.EncodeToString(decision), hexSum(hexSum(`[{"call":"c1"}]`)+hexSum("because 0")); got != want {
		t.Errorf("decision digest after clearing %s, want the one taken at insert %s", got, want)
	}
}

// TestChainVerifyNamesTampering chains rows, then changes, removes, inserts or reorders one in
// SQL: verify names it by table, uid and chain sequence, with the last good checkpoint;
// re-sealing or clearing content and later rows leave the chain whole.
func TestChainVerifyNamesTampering(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	for _, c := range []struct {
		name    string
		tamper  func(t *testing.T, fx *chainFixture)
		kind    string
		table   string
		uid     int64
		seq     int64
		lastSeq int64 // the last good checkpoint's sequence (0: none)
	}{
		{name: "untouched", tamper: func(*testing.T, *chainFixture) {}},
		{name: "content cleared and re-sealed", tamper: func(t *testing.T, fx *chainFixture) {
			fx.exec(t, `UPDATE tx_runsdesk_audit SET reason = ''`)
			fx.exec(t, `UPDATE tx_runsdesk_decision SET arguments = '', reason = 'rdseal1:k2:AAAA'`)
		}},
		{name: "actor changed", kind: auditchain.ProblemChanged, table: "tx_runsdesk_audit", uid: 11, seq: 9, lastSeq: 4,
			tamper: func(t *testing.T, fx *chainFixture) {
				fx.exec(t, `UPDATE tx_runsdesk_audit SET actor_name = 'mallory' WHERE uid = 11`)
			}},
		{name: "outcome changed", kind: auditchain.ProblemChanged, table: "tx_runsdesk_decision", uid: 3, seq: 5, lastSeq: 4,
			tamper: func(t *testing.T, fx *chainFixture) {
				fx.exec(t, `UPDATE tx_runsdesk_decision SET approved = 0 WHERE uid = 3`)
			}},
		{name: "time changed", kind: auditchain.ProblemChanged, table: "tx_runsdesk_audit", uid: 1, seq: 3,
			tamper: func(t *testing.T, fx *chainFixture) {
				fx.exec(t, `UPDATE tx_runsdesk_audit SET crdate = crdate + 60 WHERE uid = 1`)
			}},
		{name: "row deleted", kind: auditchain.ProblemRemoved, table: "tx_runsdesk_decision", uid: 4, seq: 6, lastSeq: 4,
			tamper: func(t *testing.T, fx *chainFixture) { fx.exec(t, `DELETE FROM tx_runsdesk_decision WHERE uid = 4`) }},
		{name: "chain row deleted", kind: auditchain.ProblemRemoved, seq: 8, lastSeq: 4,
			tamper: func(t *testing.T, fx *chainFixture) { fx.exec(t, `DELETE FROM tx_runsdesk_chain WHERE seq = 8`) }},
		{name: "rows reordered", kind: auditchain.ProblemReordered, table: "tx_runsdesk_audit", uid: 10, seq: 4,
			tamper: func(t *testing.T, fx *chainFixture) {
				fx.exec(t, `UPDATE tx_runsdesk_chain SET source_uid = 999 WHERE source = 1 AND source_uid = 2`)
				fx.exec(t, `UPDATE tx_runsdesk_chain SET source_uid = 2 WHERE source = 1 AND source_uid = 10`)
				fx.exec(t, `UPDATE tx_runsdesk_chain SET source_uid = 10 WHERE source = 1 AND source_uid = 999`)
			}},
		{name: "row inserted", kind: auditchain.ProblemInserted, table: "tx_runsdesk_audit", uid: 5, lastSeq: 10,
			tamper: func(t *testing.T, fx *chainFixture) {
				fx.exec(t, `INSERT INTO tx_runsdesk_audit (uid, crdate, actor_name, action, outcome, reason)
					VALUES (5, ?, 'mallory', 'approve', 'success', '')`, old.Unix())
			}},
		{name: "chain truncated", kind: auditchain.ProblemTruncated, seq: 10, lastSeq: 4,
			tamper: func(t *testing.T, fx *chainFixture) {
				fx.exec(t, `DELETE FROM tx_runsdesk_chain WHERE seq > 8`)
				fx.exec(t, `DELETE FROM tx_runsdesk_audit WHERE uid IN (11, 12)`)
			}},
		{name: "history rewritten with every hash", kind: auditchain.ProblemRewritten, seq: 10, lastSeq: 4,
			tamper: func(t *testing.T, fx *chainFixture) {
				fx.exec(t, `UPDATE tx_runsdesk_audit SET outcome = 'denied' WHERE uid = 10`)
				fx.exec(t, `DELETE FROM tx_runsdesk_chain WHERE seq > 4`)
				if _, _, err := fx.s.AppendChain(context.Background(), old.Add(time.Second).Unix(), fx.now.Unix()); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := newChainFixture(t)
			fx.write(t, 2, old) // audit and decision uids 1, 2
			if n := fx.pass(t); n != 4 {
				t.Fatalf("first pass chained %d rows, want 4", n)
			}
			// A hole in the audit uids, as Galera's auto_increment_increment leaves them.
			fx.exec(t, `ALTER TABLE tx_runsdesk_audit AUTO_INCREMENT = 10`)
			fx.write(t, 3, old.Add(time.Second)) // audit 10–12, decisions 3–5
			fx.write(t, 1, fx.now)               // younger than the lag: not chained
			if n := fx.pass(t); n != 6 {
				t.Fatalf("second pass chained %d rows, want 6", n)
			}
			// The chain: 1–2 decisions 1–2, 3–4 audit 1–2, 5–7 decisions 3–5, 8–10 audit
			// 10–12; checkpoints at 4 and 10.
			c.tamper(t, fx)
			rep := fx.verify(t, auditchain.Options{})
			if c.kind == "" {
				if !rep.OK() || rep.From != 1 || rep.To != 10 || rep.LastGood == nil || rep.LastGood.Seq != 10 {
					t.Fatalf("verify = %+v, want seq 1–10 verified through the checkpoint at 10", rep)
				}
				if rep := fx.verify(t, auditchain.Options{From: 6}); !rep.OK() || rep.From != 6 || rep.To != 10 || rep.LastGood == nil || rep.LastGood.Seq != 10 {
					t.Errorf("verify from 6 = %+v, want seq 6–10 through the checkpoint at 10", rep)
				}
				return
			}
			if rep.OK() {
				t.Fatalf("verify found nothing, want %s", c.kind)
			}
			p := rep.Problems[0]
			if p.Kind != c.kind || p.Table != c.table || p.UID != c.uid || p.Seq != c.seq {
				t.Errorf("first problem %q, want %s of %s uid %d at seq %d", p, c.kind, c.table, c.uid, c.seq)
			}
			var last int64
			if rep.LastGood != nil {
				last = rep.LastGood.Seq
			}
			if last != c.lastSeq {
				t.Errorf("last good checkpoint at %d, want %d (problems %v)", last, c.lastSeq, rep.Problems)
			}
		})
	}
}

// TestChainConcurrentWriters: 32 writers record audited actions and decisions while three
// chainers pass every 50 ms (one at a time through the lease, lag 2 s): afterwards every row
// is chained once, in one unbroken chain that verifies.
func TestChainConcurrentWriters(t *testing.T) {
	fx := newChainFixture(t)
	ctx := context.Background()
	const writers, actions = 32, 8
	done := make(chan struct{})
	var chainers, wg sync.WaitGroup
	errs := make(chan error, writers+3)
	for range 3 {
		c := auditchain.New(auditchain.Config{Store: fx.s, Lag: 2 * time.Second})
		chainers.Go(func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, _, err := c.Pass(ctx); err != nil && !errors.Is(err, auditchain.ErrBusy) {
					errs <- err
					return
				}
			}
		})
	}
	a := NewAudit(fx.pool, nil)
	for w := range writers {
		wg.Go(func() {
			for i := range actions {
				if err := a.Record(ctx, runtime.Actor{UserUID: int64(w + 1), Name: fmt.Sprintf("user%d", w)}, "", "approve",
					newUUID(), "success", fmt.Sprintf("action %d", i)); err != nil {
					errs <- err
					return
				}
				if _, err := fx.pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_decision (run, idempotency_key, kind, approved,
					decided_by, crdate, arguments, reason) VALUES (?, ?, 'approval', 1, ?, UNIX_TIMESTAMP(), '', '')`, w+1, newUUID(), w+1); err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Duration(i) * 10 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	time.Sleep(2500 * time.Millisecond) // let the chainers pass the last rows while still racing
	close(done)
	chainers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fx.now = time.Now().Add(time.Minute)
	fx.pass(t)
	rep := fx.verify(t, auditchain.Options{GapCutoff: fx.now.Unix()})
	if !rep.OK() || rep.To != 2*writers*actions {
		t.Fatalf("verify: seq %d–%d, problems %v; want %d rows in one chain", rep.From, rep.To, rep.Problems, 2*writers*actions)
	}
	var chained, distinct int
	if err := fx.pool.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT source, source_uid) FROM tx_runsdesk_chain`).Scan(&chained, &distinct); err != nil {
		t.Fatal(err)
	}
	if chained != 2*writers*actions || distinct != chained {
		t.Errorf("%d chain rows, %d distinct sources, want %d each", chained, distinct, 2*writers*actions)
	}
}

// TestChainDigestOfRowsBeforeTheMigration: rows stored before migration 0045 take the digest
// of their content at migration time (the column default is computed per row, not once).
func TestChainDigestOfRowsBeforeTheMigration(t *testing.T) {
	fx := newChainFixture(t)
	fx.exec(t, `ALTER TABLE tx_runsdesk_audit DROP COLUMN content_digest`)
	fx.exec(t, `INSERT INTO tx_runsdesk_audit (action, reason) VALUES ('login', 'first'), ('login', 'second')`)
	body, err := migrationFiles.ReadFile("migrations/0045_audit_chain.sql")
	if err != nil {
		t.Fatal(err)
	}
	alter, _, _ := strings.Cut(string(body)[strings.Index(string(body), "ALTER TABLE tx_runsdesk_audit"):], "ADD KEY")
	fx.exec(t, strings.TrimSuffix(strings.TrimSpace(alter), ","))
	rows, err := queryAll(context.Background(), fx.pool, func(r *sql.Rows) (string, error) {
		var reason string
		var digest []byte
		err := r.Scan(&reason, &digest)
		return reason + "=" + hex.EncodeToString(digest), err
	}, `SELECT reason, content_digest FROM tx_runsdesk_audit ORDER BY uid`)
	if err != nil {
		t.Fatal(err)
	}
	for i, reason := range []string{"first", "second"} {
		sum := sha256.Sum256([]byte(reason))
		if want := reason + "=" + hex.EncodeToString(sum[:]); rows[i] != want {
			t.Errorf("row %d: %s, want %s", i, rows[i], want)
		}
	}
}
