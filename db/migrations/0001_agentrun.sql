-- tx_nrllm_agentrun: one row per agent run, columns, types and defaults as upstream (nr-llm TYPO3).
-- Additions relative to upstream:
--   suspended_at  int unsigned 0: when the current pause began; 0 while not paused. Cleared by the
--                 resume claim (ClaimForResume), Cancel and every terminal transition.
--   pending_tools varchar(1024) '': comma-joined names of the tools the current pause is about
--                 (inbox tool filter via FIND_IN_SET); cleared together with suspended_at.
--   KEY waiting (suspended_at, uid): the inbox keyset, longest-waiting first.
--   KEY recent (finished_at, uid): the recent-terminal-runs keyset, newest first.
--   KEY stale (status, lease_expires): the reaper's scan for lapsed leases.
--   suspended_state and queued_request are NOT NULL (no default): every INSERT supplies them and
--   "blanked" means ''.
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
    suspended_at int unsigned NOT NULL DEFAULT 0,
    pending_tools varchar(1024) NOT NULL DEFAULT '',
    PRIMARY KEY (uid),
    KEY run_uuid (uuid),
    KEY be_user (be_user, crdate),
    KEY status_lookup (status, crdate),
    KEY crdate (crdate),
    KEY waiting (suspended_at, uid),
    KEY recent (finished_at, uid),
    KEY stale (status, lease_expires)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
