-- Additions relative to upstream, so inbox rows can be told apart:
--   tx_nrllm_configuration.subject_template varchar(1024) '': the configuration's `subject:`
--     ("Refund {{order_id}} for {{amount}} EUR"), '' for none (runtime/subject).
--   tx_nrllm_agentrun.subject varchar(255) '': the one-line subject of the run's latest pause,
--     written by Suspend from the template and the first pending call's arguments (without a
--     template: those arguments compactly, or the tool name alone when states are sealed).
--     Stored in clear so the inbox shows and searches it; '' for a run that never paused.
--   tx_nrllm_agentrun.started_by_service varchar(100) '': the service account that started the
--     run (be_user is 0 for one), '' for a person; the width of tx_runsdesk_service_account.name.
--   tx_runsdesk_outbox.subject varchar(255) '': the subject a notification carries, written
--     only for a rule with `include_subject: true`.
ALTER TABLE tx_nrllm_configuration ADD COLUMN subject_template varchar(1024) NOT NULL DEFAULT '';
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN subject varchar(255) NOT NULL DEFAULT '',
    ADD COLUMN started_by_service varchar(100) NOT NULL DEFAULT '';
ALTER TABLE tx_runsdesk_outbox ADD COLUMN subject varchar(255) NOT NULL DEFAULT '';
