-- Additions relative to upstream (upstream keeps no output and sends no notification of a
-- finished run):
--   tx_nrllm_configuration.keep_output tinyint unsigned 1: the configuration's `keep_output:`;
--     0 keeps no output of its runs (tx_runsdesk_run_output) and the API says the output is
--     withheld for privacy.
--   tx_runsdesk_outbox.termination_reason varchar(32) '': the termination reason a `finished`
--     notification carries (the run's, as it finished); '' for the other events.
ALTER TABLE tx_nrllm_configuration ADD COLUMN keep_output tinyint unsigned NOT NULL DEFAULT 1;
ALTER TABLE tx_runsdesk_outbox ADD COLUMN termination_reason varchar(32) NOT NULL DEFAULT '';
