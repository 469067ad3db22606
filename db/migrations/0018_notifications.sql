-- Additions relative to upstream (upstream sends no notifications):
--   tx_nrllm_configuration.notify mediumtext NOT NULL (no default, like the other text columns:
--     every INSERT supplies it; rows written before this migration get ''): the configuration's
--     `notify:` rules as JSON (a list of {on, channel, url, secret_env, to, webhook_url_env}), ''
--     for none. Environment variable names only, never a secret.
--   tx_runsdesk_outbox: the transactional outbox of notifications. A row is one rule's message
--     about one event of one run, inserted in the transaction of the transition that causes it
--     (suspend: waiting; decision claim: decided; the expiry steps: reminder, escalated,
--     expired), so a notification exists exactly when its transition committed. It snapshots
--     what the message says (run status, pause kind and tool, configuration, who may act,
--     times) and the rule (target: the rule's JSON, channel included), never arguments or
--     submitted values. state: pending → sending (a dispatcher's claim, claimed_by, due_at =
--     when the claim lapses) → sent | pending again (retry, due_at = next attempt) | failed
--     (attempts exhausted). attempts counts claims. The id sent with every attempt is derived
--     from (run_uuid, uid), so a redelivery carries the same id.
--   KEY due (state, due_at): the dispatchers' claim scan (due pending rows and lapsed claims).
--   KEY state_crdate (state, crdate): the oldest undelivered row (metrics) and the failed list.
--   KEY run (run, uid): a run's notifications on its page.
ALTER TABLE tx_nrllm_configuration ADD COLUMN notify mediumtext NOT NULL;
CREATE TABLE IF NOT EXISTS tx_runsdesk_outbox (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    run int unsigned NOT NULL,
    run_uuid varchar(36) NOT NULL,
    event varchar(16) NOT NULL,
    channel varchar(16) NOT NULL,
    target mediumtext NOT NULL,
    run_status varchar(32) NOT NULL,
    kind varchar(16) NOT NULL,
    tool varchar(150) NOT NULL,
    configuration_identifier varchar(150) NOT NULL,
    configuration_name varchar(255) NOT NULL,
    admin_only tinyint unsigned NOT NULL DEFAULT 0,
    four_eyes tinyint unsigned NOT NULL DEFAULT 0,
    waiting_since int unsigned NOT NULL DEFAULT 0,
    expires_at int unsigned NOT NULL DEFAULT 0,
    occurred_at int unsigned NOT NULL DEFAULT 0,
    state varchar(16) NOT NULL DEFAULT 'pending',
    attempts int unsigned NOT NULL DEFAULT 0,
    due_at int unsigned NOT NULL DEFAULT 0,
    claimed_by varchar(64) NOT NULL DEFAULT '',
    last_error varchar(255) NOT NULL DEFAULT '',
    sent_at int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    tstamp int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    KEY due (state, due_at),
    KEY state_crdate (state, crdate),
    KEY run (run, uid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
