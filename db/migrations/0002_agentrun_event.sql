-- tx_nrllm_agentrun_event: append-only run timeline, columns as upstream (nr-llm TYPO3).
-- Additions relative to upstream:
--   UNIQUE KEY run_sequence (run, sequence) replaces upstream's plain KEY(run, sequence): a
--   duplicate sequence is a bug, not data.
--   payload is NOT NULL (no default): every INSERT supplies it.
CREATE TABLE IF NOT EXISTS tx_nrllm_agentrun_event (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    pid int unsigned NOT NULL DEFAULT 0,
    run int unsigned NOT NULL DEFAULT 0,
    sequence int unsigned NOT NULL DEFAULT 0,
    kind varchar(32) NOT NULL DEFAULT '',
    round int unsigned NOT NULL DEFAULT 0,
    duration_ms decimal(10,2) NOT NULL DEFAULT 0.00,
    payload mediumtext NOT NULL,
    crdate int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY run_sequence (run, sequence)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
