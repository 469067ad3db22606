package auditchain

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"golang.org/x/mod/sumdb/note"
)

// verifyBatch is how many chain rows one read of a verification returns.
const verifyBatch = 1000

// VerifySource is what a verification reads; *db.Store implements it.
type VerifySource interface {
	// ChainEntries returns up to limit chain rows after sequence after, in sequence order, each
	// with its source row as it is now.
	ChainEntries(ctx context.Context, after int64, limit int) ([]Entry, error)
	// ChainHash is the stored hash at seq (ok false when there is no such row).
	ChainHash(ctx context.Context, seq int64) (h Hash, ok bool, err error)
	// CheckpointNotes are the signed notes of the checkpoints stored in the database.
	CheckpointNotes(ctx context.Context) ([]string, error)
	// Strays are, per table, the first row that is not chained although a later row of its
	// table is (Inserted), and the first row after every chained row of its table written at
	// or before gapCutoff (a gap: the chainer has not passed it).
	Strays(ctx context.Context, gapCutoff int64) ([]Stray, error)
}

// Stray is an audit or decision row missing from the chain.
type Stray struct {
	Source   Source
	UID      int64
	Crdate   int64
	Inserted bool
}

// Kinds of Problem.
const (
	ProblemChanged    = "changed"
	ProblemRemoved    = "removed"
	ProblemInserted   = "inserted"
	ProblemReordered  = "reordered"
	ProblemRewritten  = "rewritten"
	ProblemSignature  = "bad signature"
	ProblemTruncated  = "truncated"
	ProblemGap        = "gap"
	ProblemCheckpoint = "checkpoint conflict"
)

// Problem is one finding of a verification: its kind, the row it names (Table and UID, when
// one is named), the chain sequence and what was found.
type Problem struct {
	Kind   string
	Table  string
	UID    int64
	Seq    int64
	Detail string
}

// String is p as verify prints it.
func (p Problem) String() string {
	if p.Table == "" {
		return fmt.Sprintf("%s: %s", p.Kind, p.Detail)
	}
	return fmt.Sprintf("%s: %s uid %d at chain seq %d: %s", p.Kind, p.Table, p.UID, p.Seq, p.Detail)
}

// Options are a verification's bounds and the checkpoints it takes besides the database's.
type Options struct {
	// From is the first sequence recomputed (1 when below); from a later one the stored hash
	// before it is trusted.
	From int64
	// Notes are checkpoints kept elsewhere (a --checkpoints file).
	Notes []string
	// GapCutoff is the time (unix seconds) at or before which an unchained row is a gap.
	GapCutoff int64
}

// Report is a verification's result: the sequences recomputed and found (From–To; To < From
// when none), the valid checkpoints, the last one matched and the problems, the chain's first.
type Report struct {
	From, To    int64
	Checkpoints []Checkpoint
	// LastGood is the last checkpoint the recomputed chain matched (nil: none).
	LastGood *Checkpoint
	Problems []Problem
}

// OK reports whether the verification found nothing wrong.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Verify recomputes the chain from opts.From, checking every checkpoint's signature with v and
// its hash; it names the first row that does not match, a truncation and the rows not chained.
func Verify(ctx context.Context, src VerifySource, v note.Verifier, opts Options) (Report, error) {
	rep := Report{From: max(opts.From, 1)}
	stored, err := src.CheckpointNotes(ctx)
	if err != nil {
		return rep, fmt.Errorf("auditchain: verify: %w", err)
	}
	cps := rep.openCheckpoints(append(stored, opts.Notes...), v)
	rep.Checkpoints = cps
	w := walk{rep: &rep, lastUID: map[Source]int64{}, cps: cps}
	if rep.From > 1 {
		prev, ok, err := src.ChainHash(ctx, rep.From-1)
		if err != nil {
			return rep, fmt.Errorf("auditchain: verify: %w", err)
		}
		if !ok {
			return rep, fmt.Errorf("auditchain: verify: no chain row at seq %d to start after", rep.From-1)
		}
		w.prev = prev
	}
	w.next = rep.From
	for !w.stopped {
		entries, err := src.ChainEntries(ctx, w.next-1, verifyBatch)
		if err != nil {
			return rep, fmt.Errorf("auditchain: verify: %w", err)
		}
		if len(entries) == 0 {
			break
		}
		for i := range entries {
			if !w.step(entries, i) {
				break
			}
		}
	}
	rep.To = w.next - 1
	if !w.stopped {
		for _, c := range cps {
			if c.Seq > rep.To {
				rep.Problems = append(rep.Problems, Problem{Kind: ProblemTruncated, Seq: c.Seq, Detail: fmt.Sprintf(
					"the chain ends at seq %d but a checkpoint signed at %d covers seq %d: rows after seq %d were removed",
					rep.To, c.Time, c.Seq, rep.To)})
				break
			}
		}
	}
	strays, err := src.Strays(ctx, opts.GapCutoff)
	if err != nil {
		return rep, fmt.Errorf("auditchain: verify: %w", err)
	}
	for _, s := range strays {
		p := Problem{Kind: ProblemGap, Table: s.Source.Table(), UID: s.UID, Detail: fmt.Sprintf(
			"written at %d and not chained yet although older than the lag (is a serve or worker running?)", s.Crdate)}
		if s.Inserted {
			p.Kind, p.Detail = ProblemInserted, fmt.Sprintf("written at %d, not in the chain although later rows of its table are", s.Crdate)
		}
		rep.Problems = append(rep.Problems, p)
	}
	return rep, nil
}

// openCheckpoints checks each note's signature (a bad one is a problem), and returns the valid
// checkpoints by sequence, one per sequence (two valid ones that disagree are a problem).
func (r *Report) openCheckpoints(notes []string, v note.Verifier) []Checkpoint {
	var cps []Checkpoint
	for _, n := range notes {
		c, err := Open(n, v)
		if err != nil {
			r.Problems = append(r.Problems, Problem{Kind: ProblemSignature, Detail: fmt.Sprintf("%v: %.80q", err, n)})
			continue
		}
		cps = append(cps, c)
	}
	slices.SortFunc(cps, func(a, b Checkpoint) int { return cmp.Compare(a.Seq, b.Seq) })
	return slices.CompactFunc(cps, func(a, b Checkpoint) bool {
		if a.Seq == b.Seq && a.Hash != b.Hash {
			r.Problems = append(r.Problems, Problem{Kind: ProblemCheckpoint, Seq: a.Seq, Detail: "two signed checkpoints of this seq state different hashes"})
		}
		return a.Seq == b.Seq
	})
}

// walk is the state of a verification's pass over the chain.
type walk struct {
	rep     *Report
	cps     []Checkpoint // by sequence, one per sequence
	nextCP  int          // the first of cps not passed yet
	next    int64
	prev    Hash // the recomputed hash at next-1
	lastUID map[Source]int64
	stopped bool
}

// step checks entries[i], the row at w.next; it returns false (and sets stopped) at the first
// problem.
func (w *walk) step(entries []Entry, i int) bool {
	e := entries[i]
	if e.Seq != w.next {
		return w.stop(Problem{Kind: ProblemRemoved, Seq: w.next, Detail: fmt.Sprintf("chain rows %d–%d are missing", w.next, e.Seq-1)})
	}
	if e.Row == nil {
		return w.stop(Problem{Kind: ProblemRemoved, Table: e.Source.Table(), UID: e.SourceUID, Seq: e.Seq, Detail: "the row no longer exists"})
	}
	h := Link(w.prev, e.Seq, *e.Row)
	if h != e.Hash {
		if outOfOrder(e, w.lastUID, entries[i+1:]) {
			return w.stop(Problem{Kind: ProblemReordered, Table: e.Source.Table(), UID: e.SourceUID, Seq: e.Seq, Detail: "out of its table's uid order in the chain"})
		}
		return w.stop(Problem{Kind: ProblemChanged, Table: e.Source.Table(), UID: e.SourceUID, Seq: e.Seq, Detail: fmt.Sprintf(
			"who, what, when or outcome differs from what was chained (or, had the chain hash of seq %d been rewritten with it, that row's)", e.Seq-1)})
	}
	for w.nextCP < len(w.cps) && w.cps[w.nextCP].Seq < e.Seq {
		w.nextCP++ // a checkpoint before From
	}
	if w.nextCP < len(w.cps) && w.cps[w.nextCP].Seq == e.Seq {
		c := &w.cps[w.nextCP]
		if c.Hash != h {
			return w.stop(Problem{Kind: ProblemRewritten, Seq: c.Seq, Detail: fmt.Sprintf(
				"the chain at seq %d differs from the checkpoint signed at %d: rows after the last good checkpoint were changed and their hashes recomputed", c.Seq, c.Time)})
		}
		w.rep.LastGood = c
	}
	w.lastUID[e.Source] = e.SourceUID
	w.prev = h
	w.next++
	return true
}

func (w *walk) stop(p Problem) bool {
	w.rep.Problems = append([]Problem{p}, w.rep.Problems...)
	w.stopped = true
	return false
}

// outOfOrder reports whether e breaks its table's uid order in the chain: a uid not above the
// last one chained before it, or above one chained after it (among later).
func outOfOrder(e Entry, lastUID map[Source]int64, later []Entry) bool {
	if e.SourceUID <= lastUID[e.Source] {
		return true
	}
	for _, l := range later {
		if l.Source == e.Source && l.SourceUID < e.SourceUID {
			return true
		}
	}
	return false
}
