-- An addition relative to upstream, for the decision's read of a waiting run:
--   tx_nrllm_agentrun.pause_sequence int -1: while the run waits, its next event sequence.
--     Suspend records it after the pause's events; AppendEvent and the deadline steps that
--     leave the run waiting (reminder, escalation) move it past the event they append; -1 =
--     not known (a run paused before this column). A decision's read brings it to the claim,
--     which writes its event there without reading MAX(sequence); should it be behind, the
--     event hits UNIQUE(run, sequence) and the claim is retried at MAX(sequence)+1. It is never
--     ahead: it comes from appends committed with it, and events are never deleted.
ALTER TABLE tx_nrllm_agentrun ADD COLUMN pause_sequence int NOT NULL DEFAULT -1;
