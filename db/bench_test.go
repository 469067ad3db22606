package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"runsdesk/runtime"
)

// BenchmarkCycle measures one run's claim + event + settle cycle (insert queued, ClaimQueued, append
// one event, Finish by the owner) through the Store, against the floor: the same SQL statements
// issued directly with database/sql and no Store logic.
func BenchmarkCycle(b *testing.B) {
	s, pool := newStore(b)
	payload := json.RawMessage(`{"kind":"llm","tokens":12}`)
	settle := runtime.Settlement{Status: runtime.StatusCompleted, Iterations: 1, PromptTokens: 10,
		CompletionTokens: 2, TotalTokens: 12, Reason: runtime.ReasonCompleted}

	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			now := t0 + int64(i)
			if err := floorCycle(ctx, pool, uuid.NewString(), now, payload, settle); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			now := t0 + int64(i)
			r, err := s.CreateRun(ctx, runtime.NewRun{UUID: uuid.NewString(), ConfigurationUID: 1,
				ConfigurationIdentifier: "cfg", BeUser: 7, QueuedRequest: `{"prompt":"hi"}`, Now: now})
			if err != nil {
				b.Fatal(err)
			}
			l := runtime.Lease{Owner: "worker:bench", Expires: now + 900, Now: now}
			if err := s.ClaimQueued(ctx, r.UID, l); err != nil {
				b.Fatal(err)
			}
			if _, err := s.AppendEvent(ctx, runtime.NewEvent{Run: r.UID, Kind: runtime.EventLLM,
				Round: 1, DurationMS: 3.5, Payload: payload, Now: now}); err != nil {
				b.Fatal(err)
			}
			if err := s.Finish(ctx, r.UID, l.Owner, settle, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func floorCycle(ctx context.Context, pool *sql.DB, id string, now int64, payload []byte, st runtime.Settlement) error {
	res, err := pool.ExecContext(ctx, sqlInsertRun, id, "queued", 1, "cfg", 7, "", `{"prompt":"hi"}`,
		"", 0, 0, now, now, "", "", "", 0, "", "")
	if err != nil {
		return err
	}
	uid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if err := floorExec1(ctx, pool, sqlClaimQueued, "worker:bench", now+900, now, now, uid, now); err != nil {
		return err
	}
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	var waiting bool
	var seq int
	if err := tx.QueryRowContext(ctx, sqlLockRun, uid).Scan(&waiting, &seq); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.QueryRowContext(ctx, sqlNextSequence, uid).Scan(&seq); err != nil {
		_ = tx.Rollback()
		return err
	}
	if _, err := tx.ExecContext(ctx, sqlInsertEvent, uid, seq, runtime.EventLLM, 1, 3.5, payload, now); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return floorExec1(ctx, pool, sqlFinishOwned, string(st.Status), st.Iterations, st.Truncated,
		st.PromptTokens, st.CompletionTokens, st.TotalTokens, st.EstimatedCost, st.ErrorClass,
		st.Reason, st.PendingEffect, now, now, uid, "worker:bench")
}

func floorExec1(ctx context.Context, pool *sql.DB, query string, args ...any) error {
	res, err := pool.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return runtime.ErrGuard
	}
	return nil
}

// TestFloorCycle runs BenchmarkCycle's floor once, so its statements cannot drift from the
// Store's unnoticed (a column or a guard added to one of them fails it): the run ends as the
// Store's cycle leaves it, with its one event.
func TestFloorCycle(t *testing.T) {
	s, pool := newStore(t)
	id := uuid.NewString()
	settle := runtime.Settlement{Status: runtime.StatusCompleted, Iterations: 1, Reason: runtime.ReasonCompleted}
	if err := floorCycle(t.Context(), pool, id, t0, json.RawMessage(`{"kind":"llm"}`), settle); err != nil {
		t.Fatalf("floor cycle: %v", err)
	}
	run, err := s.FindByUUID(t.Context(), id)
	if err != nil || run.Status != runtime.StatusCompleted {
		t.Fatalf("floor cycle left %+v (%v), want completed", run, err)
	}
	var events int
	if err := pool.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ?`, run.UID).Scan(&events); err != nil || events != 1 {
		t.Fatalf("floor cycle wrote %d events (%v), want 1", events, err)
	}
}
