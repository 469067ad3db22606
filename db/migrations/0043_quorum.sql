-- Additions relative to upstream (upstream lets one approval decide every turn):
--   tx_nrllm_configuration.approvals_required tinyint unsigned 0 and
--   tx_runsdesk_tool.approvals_required tinyint unsigned 0: how many distinct people must
--     approve a turn (`approvals_required`, 1 to 5; 0: not set, so the configuration's, else 1);
--     a turn needs the largest among its pending calls.
--   ...allow_automatic_vote tinyint unsigned 0 (both tables): one approval by a service account
--     or a standing approval may count as one of those votes.
--   tx_nrllm_agentrun.pause_number int unsigned 0: which pause of the run this is, counted up by
--     every suspend, so the votes of one pause never count for the next.
--   tx_nrllm_agentrun.approvals tinyint unsigned 0: the votes recorded on the current pause;
--     every vote's guard reads it as read and moves it on, so of concurrent votes exactly one
--     counts at a time and the one that completes the quorum is the one that resumes the run.
--   tx_runsdesk_vote: one row per approval vote on a pause that needs several: the run, its
--     pause_number, the voter ("user:<uid>" for a person, "automatic" for the one service
--     account or standing approval a turn may count) and who it was (decided_by,
--     decided_by_service, voter_name), the idempotency key it came with, the turn and pin
--     digests it approved, how many approvals the turn needed (required), when (crdate).
--     UNIQUE (run, pause, voter): nobody votes twice on a pause; UNIQUE (run, idempotency_key):
--     a replayed vote finds its first outcome.
--     The final vote's row stays beside the decision it completes; cancel and expiry remove
--     the votes of the pause they end.
ALTER TABLE tx_nrllm_configuration
    ADD COLUMN approvals_required tinyint unsigned NOT NULL DEFAULT 0,
    ADD COLUMN allow_automatic_vote tinyint unsigned NOT NULL DEFAULT 0;
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN pause_number int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN approvals tinyint unsigned NOT NULL DEFAULT 0;
ALTER TABLE tx_runsdesk_tool
    ADD COLUMN approvals_required tinyint unsigned NOT NULL DEFAULT 0 AFTER max_arguments_bytes,
    ADD COLUMN allow_automatic_vote tinyint unsigned NOT NULL DEFAULT 0 AFTER approvals_required,
    MODIFY COLUMN definition_digest bigint unsigned
    GENERATED ALWAYS AS (CAST(CONV(LEFT(SHA2(CONCAT_WS(',',
        QUOTE(name), QUOTE(description), QUOTE(parameters), QUOTE(input_schema), QUOTE(effect),
        QUOTE(admin_only), QUOTE(requires_approval), QUOTE(http_url), QUOTE(http_headers),
        QUOTE(http_timeout_ms), QUOTE(http_max_response_bytes), QUOTE(mcp_server), QUOTE(mcp_tool),
        QUOTE(mcp_annotations), QUOTE(mcp_digest), QUOTE(mcp_elicitation_timeout_ms),
        QUOTE(editable), QUOTE(wait_policy), QUOTE(max_arguments_bytes), QUOTE(approvals_required),
        QUOTE(allow_automatic_vote)), 256), 16), 16, 10) AS UNSIGNED)) STORED;
CREATE TABLE IF NOT EXISTS tx_runsdesk_vote (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    run int unsigned NOT NULL,
    pause int unsigned NOT NULL,
    voter varchar(128) NOT NULL,
    voter_name varchar(255) NOT NULL DEFAULT '',
    decided_by int unsigned NOT NULL DEFAULT 0,
    decided_by_service varchar(100) NOT NULL DEFAULT '',
    idempotency_key varchar(64) NOT NULL,
    turn_digest varchar(64) NOT NULL DEFAULT '',
    pin_digest varchar(64) NOT NULL DEFAULT '',
    required tinyint unsigned NOT NULL DEFAULT 1,
    crdate int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY run_pause_voter (run, pause, voter),
    UNIQUE KEY run_key (run, idempotency_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
