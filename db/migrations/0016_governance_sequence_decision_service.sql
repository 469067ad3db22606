-- Additions relative to upstream, one ALTER per table (the migration runner records this file,
-- so each runs once):
--   tx_nrllm_governance_event.sequence int NOT NULL DEFAULT -1: the sequence
--     (tx_nrllm_agentrun_event.sequence) of the step the row follows: the run's step it was
--     written with, or for a row written on its own (a decider refused while the run waited)
--     the run's last step at that time; so the run page's timeline, ordered by time then
--     sequence, shows the row right after that step. -1 when there is none or it is unknown.
--   tx_runsdesk_decision.decided_by_service varchar(100) NOT NULL DEFAULT '': the name of the
--     service account that decided (decided_by is 0 for one), '' for a person; the width of
--     tx_runsdesk_service_account.name.
ALTER TABLE tx_nrllm_governance_event ADD COLUMN sequence int NOT NULL DEFAULT -1;
ALTER TABLE tx_runsdesk_decision ADD COLUMN decided_by_service varchar(100) NOT NULL DEFAULT '';
