-- Queue health (additions relative to upstream, one ALTER per table; the migration runner records
-- this file, so each runs once). A decision row keeps what the queue page groups and times it by,
-- taken from the pause it ended as read by the decision, so the page reads the window's
-- decisions alone and never the runs, their events, or a rollup row updated on every decision:
--   tx_runsdesk_decision.paused_at int unsigned 0: when the pause it ended started (the run's
--     suspended_at as read; it is cleared on resume), so time to decision = crdate - paused_at;
--     0 when unknown (rows written before this migration).
--   tx_runsdesk_decision.configuration_identifier varchar(150) '': the run's configuration.
--   tx_runsdesk_decision.pending_tools varchar(1024) '': the tools the pause was about
--     (comma-joined, as tx_nrllm_agentrun.pending_tools).
--   KEY crdate (crdate): the decisions of a window (db/queue.go QueueHealth), read as a range.
-- The last week's rows get their run's configuration (through KEY crdate and the run's primary
-- key), so the page is whole from the start; their tools and pause start stay unknown.
ALTER TABLE tx_runsdesk_decision
    ADD COLUMN paused_at int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN configuration_identifier varchar(150) NOT NULL DEFAULT '',
    ADD COLUMN pending_tools varchar(1024) NOT NULL DEFAULT '',
    ADD KEY crdate (crdate);
UPDATE tx_runsdesk_decision d JOIN tx_nrllm_agentrun r ON r.uid = d.run
    SET d.configuration_identifier = r.configuration_identifier
    WHERE d.crdate >= UNIX_TIMESTAMP() - 7 * 86400;
