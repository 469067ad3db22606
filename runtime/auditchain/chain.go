// Package auditchain is the tamper-evident audit trail (docs/audit.md): the hash chain every
// audit and decision row joins once it is older than a safety lag, the signed checkpoints of
// the chain, the chainer that appends both in the background, and the verification that
// recomputes the chain and names the first row that does not match.
package auditchain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Source is the table a chained row comes from; its number is stored in tx_runsdesk_chain.source.
type Source int

// The chained tables.
const (
	SourceAudit    Source = 1
	SourceDecision Source = 2
)

// Sources lists every chained table, in the order a pass reads them.
func Sources() []Source { return []Source{SourceAudit, SourceDecision} }

// Table is the name of s's table, as the canonical JSON and the reports name it.
func (s Source) Table() string {
	switch s {
	case SourceAudit:
		return "tx_runsdesk_audit"
	case SourceDecision:
		return "tx_runsdesk_decision"
	}
	return fmt.Sprintf("source %d", int(s))
}

// Hash is a SHA-256 value: a link of the chain or a row's content digest.
type Hash [sha256.Size]byte

// String is h in lower-case hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Row is what the chain covers of one audit or decision row: its non-content columns and the
// digest of its content the database took at insert (content_digest, 0045_audit_chain.sql).
type Row struct {
	Source Source
	UID    int64
	Crdate int64
	// Fields are the other non-content columns, by column name.
	Fields map[string]any
	Digest Hash
}

// AuditRow is the Row of a tx_runsdesk_audit row.
func AuditRow(uid, crdate, actorUID int64, actorName, ip, action, runUUID, outcome string, digest Hash) Row {
	return Row{Source: SourceAudit, UID: uid, Crdate: crdate, Digest: digest, Fields: map[string]any{
		"actor_uid": actorUID, "actor_name": actorName, "ip": ip, "action": action,
		"run_uuid": runUUID, "outcome": outcome,
	}}
}

// DecisionRow is the Row of a tx_runsdesk_decision row.
func DecisionRow(uid, crdate, run int64, idempotencyKey, kind string, approved bool, decidedBy int64, decidedByService string, digest Hash) Row {
	return Row{Source: SourceDecision, UID: uid, Crdate: crdate, Digest: digest, Fields: map[string]any{
		"run": run, "idempotency_key": idempotencyKey, "kind": kind, "approved": approved,
		"decided_by": decidedBy, "decided_by_service": decidedByService,
	}}
}

// Canonical is r at chain sequence seq as canonical JSON: seq, table, uid, crdate, content (the
// digest in hex) and the Fields in one object, keys in byte order, as encoding/json writes it.
func (r Row) Canonical(seq int64) []byte {
	m := make(map[string]any, len(r.Fields)+5)
	for k, v := range r.Fields {
		m[k] = v
	}
	m["seq"], m["table"], m["uid"], m["crdate"], m["content"] = seq, r.Source.Table(), r.UID, r.Crdate, r.Digest.String()
	b, err := json.Marshal(m) // map keys are sorted; the values are numbers, strings and booleans
	if err != nil {
		panic("auditchain: canonical JSON: " + err.Error())
	}
	return b
}

// Link is the chain's hash at seq for row r after prev (the hash at seq-1, the zero Hash
// before seq 1): SHA-256(prev ‖ r.Canonical(seq)).
func Link(prev Hash, seq int64, r Row) Hash {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(r.Canonical(seq))
	var out Hash
	h.Sum(out[:0])
	return out
}

// Head is the end of the chain: its last sequence and hash (0 and the zero Hash when empty).
type Head struct {
	Seq  int64
	Hash Hash
}

// Entry is one stored row of the chain: its sequence, the source row it names, the hash the
// chainer stored and the source row as it is now (Row nil when it no longer exists).
type Entry struct {
	Seq       int64
	Source    Source
	SourceUID int64
	Hash      Hash
	Row       *Row
}
