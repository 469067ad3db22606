-- Addition relative to upstream: retry_at int unsigned 0 on tx_nrllm_agentrun, the earliest time
-- (unix seconds) a queued run may be claimed. The requeue (running → queued) of a retryable
-- provider failure sets it to now + 30 s·2^n (n = the run's requeues so far, at most 600 s);
-- every other requeue sets 0 (at once); the claim (queued → running) clears it. It means something
-- only while the run is queued (the run page and API show it then as "retrying at"). Workers list
-- only queued runs with retry_at <= now (db/inbox.go ListQueued, still read on KEY status_lookup).
-- The migration runner records this file, so a plain ALTER runs once.
ALTER TABLE tx_nrllm_agentrun ADD COLUMN retry_at int unsigned NOT NULL DEFAULT 0;
