-- Comments. An addition relative to upstream (upstream has no notes between people):
--   tx_runsdesk_comment: one row per comment a person wrote on a run while it waited. The model
--     never sees a comment; the run page's timeline shows it to everyone who may read the run.
--   run int unsigned: tx_nrllm_agentrun.uid of the run.
--   sequence int unsigned: the sequence of the run's `comment` event written with it (its
--     place on the timeline).
--   author int unsigned: be_users.uid of the person who wrote it (tokens cannot comment).
--   idempotency_key varchar(64): the key the form posted; UNIQUE (run, idempotency_key), so a
--     form posted twice stores one comment and the replay finds it.
--   body text: what they wrote (at most 2,000 characters), sealed (package seal) while keys
--     are set; body_key_id is its key id, STORED generated as for every sealed column.
--   crdate int unsigned: when it was written (unix seconds).
--   KEY run_sequence (run, sequence): a run's comments in timeline order, and their removal.
CREATE TABLE IF NOT EXISTS tx_runsdesk_comment (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    run int unsigned NOT NULL,
    sequence int unsigned NOT NULL,
    author int unsigned NOT NULL,
    idempotency_key varchar(64) NOT NULL,
    body text NOT NULL,
    crdate int unsigned NOT NULL DEFAULT 0,
    body_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(body, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(body, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    PRIMARY KEY (uid),
    UNIQUE KEY run_key (run, idempotency_key),
    KEY run_sequence (run, sequence),
    KEY body_key_id (body_key_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
