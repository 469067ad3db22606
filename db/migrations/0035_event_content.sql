-- tx_runsdesk_event_content: the content of a run event (prompt, model message, tool arguments
-- and result, submitted values) under the run's privacy mode, kept beside the TYPO3 event row so
-- tx_nrllm_agentrun_event.payload keeps only counts and lengths, as upstream. An addition
-- (upstream keeps redacted content in the payload itself):
--   event int unsigned: tx_nrllm_agentrun_event.uid (one content row per event).
--   run int unsigned: tx_nrllm_agentrun.uid of the event's run (its transcript, its removal).
--   privacy varchar(16) ascii: the mode the content was kept under, 'redacted' or 'full'
--                              (a 'metadata' run keeps no rows).
--   content mediumtext: the event's content as a JSON object, sealed (package seal) while keys
--                       are set.
--   crdate int unsigned: when it was written (unix seconds).
--   content_key_id varchar(32) ascii: STORED generated, the key id of a sealed content (NULL
--                                     for cleartext), as for every sealed column.
--   UNIQUE KEY event (event): the one content of an event.
--   KEY run_event (run, event): a run's transcript in order, and its removal.
CREATE TABLE IF NOT EXISTS tx_runsdesk_event_content (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    event int unsigned NOT NULL,
    run int unsigned NOT NULL,
    privacy varchar(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
    content mediumtext NOT NULL,
    crdate int unsigned NOT NULL DEFAULT 0,
    content_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(content, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(content, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    PRIMARY KEY (uid),
    UNIQUE KEY event (event),
    KEY run_event (run, event),
    KEY content_key_id (content_key_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
