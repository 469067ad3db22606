-- tx_nrllm_governance_event: append-only policy decisions, upstream's columns:
-- crdate, correlation_id (= run uuid), decision, reason, provider, model,
-- configuration_identifier, be_user, tool_name, agentrun_uid, guardrail, detail; never content.
-- Upstream states names, not widths; the types follow tx_nrllm_agentrun's (uuid varchar(36),
-- configuration_identifier varchar(150), uids int unsigned).
-- Additions relative to upstream:
--   KEY crdate (crdate) for retention purges, KEY agentrun (agentrun_uid) and
--   KEY correlation (correlation_id) for the per-run lookup.
--   detail is NOT NULL (no default): every INSERT supplies it.
CREATE TABLE IF NOT EXISTS tx_nrllm_governance_event (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    pid int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    correlation_id varchar(36) NOT NULL DEFAULT '',
    decision varchar(32) NOT NULL DEFAULT '',
    reason varchar(255) NOT NULL DEFAULT '',
    provider varchar(100) NOT NULL DEFAULT '',
    model varchar(150) NOT NULL DEFAULT '',
    configuration_identifier varchar(150) NOT NULL DEFAULT '',
    be_user int unsigned NOT NULL DEFAULT 0,
    tool_name varchar(150) NOT NULL DEFAULT '',
    agentrun_uid int unsigned NOT NULL DEFAULT 0,
    guardrail varchar(255) NOT NULL DEFAULT '',
    detail text NOT NULL,
    PRIMARY KEY (uid),
    KEY crdate (crdate),
    KEY agentrun (agentrun_uid),
    KEY correlation (correlation_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
