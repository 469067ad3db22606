-- tx_runsdesk_call: one row per call a segment executed, written with the tool event of the
-- step that answered it, in the same transaction (the checkpoint after the call, or the write
-- that stores the segment's progress), never updated. An addition (upstream records no
-- arguments):
--   run int unsigned: tx_nrllm_agentrun.uid.
--   sequence int unsigned: the sequence of the tool event the row was written with.
--   call_id text: the tool call's id as the model gave it.
--   tool varchar(150): the tool's name.
--   proposed, approved, effective mediumtext: the model's arguments, the arguments an approval
--     let run, and the arguments the tool was sent, byte for byte; each a JSON object, or ''
--     (none: the model's were not an object, no approval decided the call). Sealed like the
--     run's state when keys are set, each bound to its column and run.
--   crdate int unsigned: the event's time.
--   UNIQUE KEY run_sequence (run, sequence): the run's calls in order; a step stored twice is a
--     bug, not data.
-- An edited approval's decision row (tx_runsdesk_decision.arguments) keeps what was decided
-- (proposed, approved, patch); an "effective" it carries from before this table is not read.
CREATE TABLE IF NOT EXISTS tx_runsdesk_call (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    run int unsigned NOT NULL,
    sequence int unsigned NOT NULL,
    call_id text NOT NULL,
    tool varchar(150) NOT NULL,
    proposed mediumtext NOT NULL,
    approved mediumtext NOT NULL,
    effective mediumtext NOT NULL,
    crdate int unsigned NOT NULL,
    PRIMARY KEY (uid),
    UNIQUE KEY run_sequence (run, sequence)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
