-- tx_runsdesk_decision: accepted approvals and input submissions with the caller's idempotency
-- key, so a replayed POST returns the first outcome. An addition (upstream keeps only the
-- approval/input event): uid, run, idempotency_key varchar(64), kind varchar(16)
-- (approval / input), approved tinyint, decided_by (be_users.uid), crdate;
-- UNIQUE KEY run_key (run, idempotency_key); KEY run_uid (run, uid) for the latest decision.
-- Never stores submitted values.
CREATE TABLE IF NOT EXISTS tx_runsdesk_decision (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    run int unsigned NOT NULL DEFAULT 0,
    idempotency_key varchar(64) NOT NULL DEFAULT '',
    kind varchar(16) NOT NULL DEFAULT '',
    approved tinyint unsigned NOT NULL DEFAULT 0,
    decided_by int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY run_key (run, idempotency_key),
    KEY run_uid (run, uid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
