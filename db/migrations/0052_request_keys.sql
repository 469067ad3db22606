-- The keys that make creating an external request idempotent. Additions relative to upstream
-- (upstream has no external requests):
--   tx_nrllm_agentrun.external_id varchar(191) '': the caller's own id of the request ('' when
--     it gave none).
--   tx_nrllm_agentrun.request_key varchar(64) '': the Idempotency-Key the creating service
--     account sent ('' when none).
--   tx_nrllm_agentrun.request_digest char(64) ascii '': the SHA-256 (hex) of the request as
--     created, so a repeat with the same body replays the request and a different body is a
--     conflict.
--   tx_nrllm_agentrun.on_behalf_of int unsigned 0, on_behalf_of_name varchar(255) '': the
--     person (be_users.uid, and their username as given) a request's agent acts for; 0 and ''
--     for none. Four-eyes treats them as the run's initiator.
--   tx_nrllm_agentrun.external_id_unique, request_key_unique: STORED generated, the key or
--     NULL when it is '', so that runs without one never collide in the unique keys:
--     UNIQUE KEY request_external_id (configuration_uid, external_id_unique): one external id
--     names at most one request of a configuration; UNIQUE KEY request_idempotency_key
--     (started_by_service, request_key_unique): likewise an Idempotency-Key per service account.
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN external_id varchar(191) NOT NULL DEFAULT '',
    ADD COLUMN request_key varchar(64) NOT NULL DEFAULT '',
    ADD COLUMN request_digest char(64) CHARACTER SET ascii NOT NULL DEFAULT '',
    ADD COLUMN on_behalf_of int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN on_behalf_of_name varchar(255) NOT NULL DEFAULT '',
    ADD COLUMN external_id_unique varchar(191) AS (NULLIF(external_id, '')) STORED,
    ADD COLUMN request_key_unique varchar(64) AS (NULLIF(request_key, '')) STORED,
    ADD UNIQUE KEY request_external_id (configuration_uid, external_id_unique),
    ADD UNIQUE KEY request_idempotency_key (started_by_service, request_key_unique);
