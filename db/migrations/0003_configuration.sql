-- tx_nrllm_configuration: the columns of upstream's configuration record that runsdesk uses
-- (uid, pid, tstamp, crdate, deleted, hidden, identifier, name, system_prompt,
-- require_second_approver as upstream).
-- Additions relative to upstream (upstream reaches provider and model through tx_nrllm_model /
-- tx_nrllm_provider and tools through tool groups; runsdesk keeps them on the record):
--   provider_kind varchar(32), provider_base_url varchar(2048), provider_model varchar(150),
--   provider_api_key_env varchar(150): the provider settings (the key's environment variable
--   name, never the key).
--   provider_options mediumtext: JSON {timeout_ms, max_retries, script}.
--   max_iterations int unsigned 20: per-configuration iteration cap.
--   allowed_tools text: JSON list of allowed tool names, order kept.
--   UNIQUE KEY identifier (identifier): `apply -f` upserts by identifier (upstream: plain KEY).
--   Text columns are NOT NULL (no default): every INSERT supplies them.
CREATE TABLE IF NOT EXISTS tx_nrllm_configuration (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    pid int unsigned NOT NULL DEFAULT 0,
    tstamp int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    deleted tinyint unsigned NOT NULL DEFAULT 0,
    hidden tinyint unsigned NOT NULL DEFAULT 0,
    identifier varchar(150) NOT NULL DEFAULT '',
    name varchar(255) NOT NULL DEFAULT '',
    provider_kind varchar(32) NOT NULL DEFAULT '',
    provider_base_url varchar(2048) NOT NULL DEFAULT '',
    provider_model varchar(150) NOT NULL DEFAULT '',
    provider_api_key_env varchar(150) NOT NULL DEFAULT '',
    provider_options mediumtext NOT NULL,
    system_prompt text NOT NULL,
    max_iterations int unsigned NOT NULL DEFAULT 20,
    require_second_approver tinyint unsigned NOT NULL DEFAULT 0,
    allowed_tools text NOT NULL,
    PRIMARY KEY (uid),
    UNIQUE KEY identifier (identifier)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
