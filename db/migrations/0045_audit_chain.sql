-- The tamper-evident audit trail (docs/audit.md). Additions relative to upstream (upstream keeps
-- no hash chain):
--   tx_runsdesk_audit.content_digest, tx_runsdesk_decision.content_digest binary(32): the
--     SHA-256 of the row's content as it was first stored, taken by the database when the row
--     is inserted (a DEFAULT expression: no writer names the column, and an UPDATE never
--     recomputes it). An audit row's content is its reason; a decision row's is its arguments
--     and reason, digested as SHA-256(hex SHA-256(arguments) ‖ hex SHA-256(reason)). A sealed
--     value is digested as stored (its envelope), so re-sealing under a new key, or retention
--     clearing the content, leaves the digest and the chain as they were. Rows already stored
--     take the digest of their content at migration time.
--   KEY actor_name, action, outcome on tx_runsdesk_audit: the /audit filters, each a range in
--     uid order (InnoDB appends the primary key to a secondary one), newest first by keyset.
--   tx_runsdesk_chain: one row per chained audit or decision row, in chain order.
--     seq bigint unsigned: the chain sequence, 1, 2, 3, … without holes (the primary key, so two
--       chainers can never append the same sequence).
--     source tinyint unsigned: 1 tx_runsdesk_audit, 2 tx_runsdesk_decision.
--     source_uid int unsigned: the row's uid; UNIQUE (source, source_uid): a row joins once.
--     hash binary(32): SHA-256(hash of seq-1 ‖ canonical JSON of the row), seq 1 after 32 zero
--       bytes.
--     crdate int unsigned: when the chainer appended it (unix seconds).
--   tx_runsdesk_chain_checkpoint: the signed checkpoints, one per --checkpoint-interval.
--     seq bigint unsigned: the chain sequence it covers (primary key).
--     hash binary(32): the chain's hash at seq.
--     crdate int unsigned: when it was signed (unix seconds).
--     note text: the signed note (golang.org/x/mod/sumdb/note) stating seq, hash and time.
ALTER TABLE tx_runsdesk_audit
    ADD COLUMN content_digest binary(32) NOT NULL DEFAULT (UNHEX(SHA2(reason, 256))),
    ADD KEY actor_name (actor_name),
    ADD KEY action (action),
    ADD KEY outcome (outcome);
ALTER TABLE tx_runsdesk_decision
    ADD COLUMN content_digest binary(32) NOT NULL
        DEFAULT (UNHEX(SHA2(CONCAT(SHA2(arguments, 256), SHA2(reason, 256)), 256)));
CREATE TABLE IF NOT EXISTS tx_runsdesk_chain (
    seq bigint unsigned NOT NULL,
    source tinyint unsigned NOT NULL,
    source_uid int unsigned NOT NULL,
    hash binary(32) NOT NULL,
    crdate int unsigned NOT NULL,
    PRIMARY KEY (seq),
    UNIQUE KEY source_uid (source, source_uid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS tx_runsdesk_chain_checkpoint (
    seq bigint unsigned NOT NULL,
    hash binary(32) NOT NULL,
    crdate int unsigned NOT NULL,
    note text NOT NULL,
    PRIMARY KEY (seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
