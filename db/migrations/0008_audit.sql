-- tx_runsdesk_audit: append-only audit trail of logins, denials and decisions (with the
-- decider's reason). An addition (upstream relies on TYPO3's sys_log): uid, crdate,
-- actor_uid (be_users.uid, 0 = service account or anonymous), actor_name varchar(100),
-- ip varchar(45) (IPv6 text form), action varchar(32), run_uuid varchar(36), outcome
-- varchar(32), reason text; KEY crdate (crdate), KEY run_uuid (run_uuid).
-- Never stores submitted values. reason is NOT NULL (no default): every INSERT supplies it.
CREATE TABLE IF NOT EXISTS tx_runsdesk_audit (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    crdate int unsigned NOT NULL DEFAULT 0,
    actor_uid int unsigned NOT NULL DEFAULT 0,
    actor_name varchar(100) NOT NULL DEFAULT '',
    ip varchar(45) NOT NULL DEFAULT '',
    action varchar(32) NOT NULL DEFAULT '',
    run_uuid varchar(36) NOT NULL DEFAULT '',
    outcome varchar(32) NOT NULL DEFAULT '',
    reason text NOT NULL,
    PRIMARY KEY (uid),
    KEY crdate (crdate),
    KEY run_uuid (run_uuid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
