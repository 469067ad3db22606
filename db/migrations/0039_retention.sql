-- Additions relative to upstream (upstream keeps runs until an administrator purges them):
--   tx_nrllm_configuration.retention_outputs, retention_transcripts, retention_runs int unsigned:
--     the configuration's `retention:` in seconds after a run finished; 0 is the default (outputs
--     and transcripts 30 days, runs forever), which the rows written before get.
--   KEY retention (configuration_uid, finished_at) on tx_nrllm_agentrun: the retention pass's
--     scan of one configuration's runs finished in a window, so each pass reads only the runs
--     that expired since the last (db/retention.go).
--   tx_runsdesk_retention_mark: how far the pass got, per configuration and class (outputs,
--     transcripts, runs): every run of configuration_uid that finished at or before swept_to
--     has had that class removed, so the next pass starts after it.
ALTER TABLE tx_nrllm_configuration
    ADD COLUMN retention_outputs int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN retention_transcripts int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN retention_runs int unsigned NOT NULL DEFAULT 0;
ALTER TABLE tx_nrllm_agentrun ADD KEY retention (configuration_uid, finished_at);
CREATE TABLE IF NOT EXISTS tx_runsdesk_retention_mark (
    configuration_uid int unsigned NOT NULL,
    class varchar(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    swept_to int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (configuration_uid, class)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
