-- The key id of every sealed value, kept by the database itself so the ids a desk's rows are
-- sealed with are found through an index, never by reading every row (serve refuses to start
-- when one is missing from its key set; `runsdesk keys status` prints them). An addition
-- relative to upstream (upstream seals nothing):
--   <column>_key_id varchar(32) ascii, STORED generated from <column> for each sealed column
--     (db.SealedColumns): the id between the envelope's prefix 'rdseal1:' and the next ':', NULL
--     for cleartext and for an empty value. Never written by the desk.
--   KEY <column>_key_id (<column>_key_id): the ids and their counts read from the index.
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN suspended_state_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(suspended_state, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(suspended_state, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    ADD COLUMN queued_request_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(queued_request, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(queued_request, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    ADD KEY suspended_state_key_id (suspended_state_key_id),
    ADD KEY queued_request_key_id (queued_request_key_id);
ALTER TABLE tx_runsdesk_decision
    ADD COLUMN arguments_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(arguments, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(arguments, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    ADD COLUMN reason_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(reason, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(reason, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    ADD KEY arguments_key_id (arguments_key_id),
    ADD KEY reason_key_id (reason_key_id);
ALTER TABLE tx_runsdesk_call
    ADD COLUMN proposed_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(proposed, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(proposed, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    ADD COLUMN approved_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(approved, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(approved, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    ADD COLUMN effective_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(effective, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(effective, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    ADD KEY proposed_key_id (proposed_key_id),
    ADD KEY approved_key_id (approved_key_id),
    ADD KEY effective_key_id (effective_key_id);
ALTER TABLE tx_runsdesk_draft
    ADD COLUMN form_values_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(form_values, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(form_values, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    ADD KEY form_values_key_id (form_values_key_id);
