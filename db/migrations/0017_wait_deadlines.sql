-- Additions relative to upstream (the waiting policy and the deadlines of a pause), one ALTER per
-- table (the migration runner records this file, so each runs once):
--   tx_nrllm_configuration.wait_policy, tx_runsdesk_tool.wait_policy varchar(2048) '': the
--     `wait:` block of `apply -f` as JSON (wait.Policy; '' = none).
--   tx_nrllm_agentrun, set by Suspend for the pause it stores (meaningful only while waiting):
--     expires_at int unsigned 0: when the pause expires (0 = never), from suspended_at;
--     remind_at int unsigned 0: when its reminder is due (0 = none, or already recorded);
--     escalate_at int unsigned 0: when it escalates (0 = never);
--     escalated tinyint 0: whether it was escalated;
--     wait_due int unsigned 0: the next of the three still to happen, what the expirer scans;
--     wait_policy varchar(2048) '': the actions its expiry takes (wait.Deadline as JSON).
--   KEY wait_due (status, wait_due): the expirer's scan of due pauses (db/expiry.go FindDue) reads
--     only the due rows of the two waiting statuses, at every table size.
--   KEY waiting_expires (status, expires_at): the inbox's "expiring soon" filter and sort.
ALTER TABLE tx_nrllm_configuration ADD COLUMN wait_policy varchar(2048) NOT NULL DEFAULT '';
ALTER TABLE tx_runsdesk_tool ADD COLUMN wait_policy varchar(2048) NOT NULL DEFAULT '';
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN expires_at int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN remind_at int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN escalate_at int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN escalated tinyint unsigned NOT NULL DEFAULT 0,
    ADD COLUMN wait_due int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN wait_policy varchar(2048) NOT NULL DEFAULT '',
    ADD KEY wait_due (status, wait_due),
    ADD KEY waiting_expires (status, expires_at);
