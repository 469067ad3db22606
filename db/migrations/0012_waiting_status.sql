-- Addition relative to upstream: KEY waiting_status (status, suspended_at; InnoDB appends uid), so
-- an inbox page filtered by pause kind (db/inbox.go ListWaiting) is a keyset scan in list order
-- on one index at every table size. Without it the optimizer's plan for that page changed with
-- the statistics: at 100k runs it built a rowid filter from 5,000 entries of KEY stale on every
-- page (2 ms instead of 0.2 ms). The migration runner records this file, so a plain ALTER runs
-- once.
ALTER TABLE tx_nrllm_agentrun ADD KEY waiting_status (status, suspended_at);
