-- tx_nrllm_agentrun as the TYPO3 extension nr-llm defines it: upstream's columns, types and
-- defaults, and only upstream's keys. runsdesk's additions (suspended_at, pending_tools and every
-- later column, KEY waiting, recent, stale and the rest) are deliberately absent: a TYPO3 site's
-- table does not have them, and package typo3/extruns must work without them.
CREATE TABLE tx_nrllm_agentrun (
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
    suspended_state mediumtext NOT NULL,
    queued_request mediumtext NOT NULL,
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
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci
