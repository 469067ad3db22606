-- Addition relative to upstream: KEY waiting_counts (suspended_at, status, configuration_uid), so
-- the inbox's capped per-kind count (db/inbox.go CountWaiting) reads only the index, whatever the
-- size of the run table. The migration runner records this file, so a plain ALTER runs once.
ALTER TABLE tx_nrllm_agentrun ADD KEY waiting_counts (suspended_at, status, configuration_uid);
