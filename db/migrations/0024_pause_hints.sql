-- Additions relative to upstream: what a waiting run's row tells the decision that claims it,
-- so the claim neither reads MAX(sequence) nor removes drafts that do not exist.
--   tx_nrllm_agentrun.pause_sequence int -1: while the run waits, its next event sequence.
--     Suspend records it after the pause's events; AppendEvent and the deadline steps that
--     leave the run waiting (reminder, escalation) move it past the event they append; -1 =
--     not known (a run paused before this column). A decision's read brings it to the claim,
--     which writes its event there without reading MAX(sequence); should it be behind, the
--     event hits UNIQUE(run, sequence) and the claim is retried at MAX(sequence)+1. It is never
--     ahead: it comes from appends committed with it, and events are never deleted.
--   tx_nrllm_agentrun.has_drafts tinyint 1: whether the pause may have drafts
--     (tx_runsdesk_draft): Suspend sets 0 (a new pause has none), the first SaveDraft of the
--     pause sets 1 under the run row's lock; 1 for rows before this column. A claim of a pause
--     read with 0 removes no drafts and is guarded by has_drafts = 0, so a draft saved after
--     the read makes it fall back to the claim that removes them.
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN pause_sequence int NOT NULL DEFAULT -1,
    ADD COLUMN has_drafts tinyint unsigned NOT NULL DEFAULT 1;
