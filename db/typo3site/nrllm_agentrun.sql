-- tx_nrllm_agentrun as the nr-llm TYPO3 extension defines it (netresearch/t3x-nr-llm): its
-- columns, types and defaults, and only its keys (run_uuid, be_user, status_lookup, crdate).
-- runsdesk's additions (suspended_at, pending_tools and every later column, KEY waiting,
-- recent, stale and the rest) are absent: a TYPO3 site's table does not have them. The payload
-- columns may be NULL, as a text column TYPO3 made without NOT NULL is; readers take NULL as ''.
-- runsdesk creates the table beside a TYPO3 site (--typo3) only when the site lacks it, and
-- never writes its rows; runsdesk's own runs live in tx_runsdesk_run.
CREATE TABLE IF NOT EXISTS tx_nrllm_agentrun (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    pid int unsigned NOT NULL DEFAULT 0,
    uuid varchar(36) NOT NULL DEFAULT '',
    status varchar(32) NOT NULL DEFAULT 'queued',
    configuration_uid int unsigned NOT NULL DEFAULT 0,
    configuration_identifier varchar(150) NOT NULL DEFAULT '',
    be_user int unsigned NOT NULL DEFAULT 0,
    iterations int unsigned NOT NULL DEFAULT 0,
    truncated tinyint unsigned NOT NULL DEFAULT 0,
    total_prompt_tokens int unsigned NOT NULL DEFAULT 0,
    total_completion_tokens int unsigned NOT NULL DEFAULT 0,
    total_tokens int unsigned NOT NULL DEFAULT 0,
    estimated_cost decimal(10,6) NOT NULL DEFAULT 0.000000,
    error_class varchar(255) NOT NULL DEFAULT '',
    termination_reason varchar(32) NOT NULL DEFAULT '',
    suspended_state mediumtext,
    queued_request mediumtext,
    claimed_by varchar(64) NOT NULL DEFAULT '',
    lease_expires int unsigned NOT NULL DEFAULT 0,
    requeue_count int unsigned NOT NULL DEFAULT 0,
    pending_effect varchar(32) NOT NULL DEFAULT '',
    started_at int unsigned NOT NULL DEFAULT 0,
    finished_at int unsigned NOT NULL DEFAULT 0,
    tstamp int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    KEY run_uuid (uuid),
    KEY be_user (be_user, crdate),
    KEY status_lookup (status, crdate),
    KEY crdate (crdate)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
