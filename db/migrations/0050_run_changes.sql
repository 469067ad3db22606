-- The live desk's feed of run changes (additions relative to upstream):
--   tx_nrllm_agentrun.changed_at timestamp(6) CURRENT_TIMESTAMP(6): when the row last changed,
--     to the microsecond. MariaDB sets it on every insert and on every update that changes a
--     value (ON UPDATE), so no write has to remember it; rows present before this migration
--     get the migration's time.
--   KEY changed (changed_at; InnoDB appends uid): the shared poll of open event streams reads
--     the runs changed since its cursor as one range, oldest change first (db/desk.go).
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN changed_at timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    ADD KEY changed (changed_at);
