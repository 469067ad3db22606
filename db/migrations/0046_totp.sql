-- Two-factor sign-in. Additions relative to upstream (TYPO3's be_users has no second factor):
--   tx_runsdesk_totp: at most one TOTP factor per person.
--     be_user int unsigned UNIQUE: be_users.uid of the person.
--     secret text: the base32 TOTP secret, sealed (package seal) bound to the person; enrolment
--       is refused without keys, so it is never stored in clear. secret_key_id is its key id,
--       STORED generated as for every sealed column.
--     confirmed tinyint: 0 while enrolment waits for the first code, 1 once a code confirmed it
--       (only a confirmed factor is asked for at sign-in).
--     last_step bigint: the last time step (unix seconds / 30) a code was accepted for; a code
--       of that step or an earlier one is refused (replay), by a guarded UPDATE.
--     crdate, tstamp int unsigned: created and last changed (unix seconds).
--   tx_runsdesk_recovery_code: a person's single-use recovery codes, replaced ten at a time.
--     be_user int unsigned: be_users.uid of the person.
--     code_hash char(64) ascii: hex SHA-256 of the code (80 random bits; the code itself is
--       shown once and never stored). UNIQUE (be_user, code_hash).
--     used_at int unsigned: when it was used (unix seconds; 0: not yet). Set once, by a
--       guarded UPDATE, so two uses of one code at once let exactly one through.
--     crdate int unsigned: when it was made (unix seconds).
CREATE TABLE IF NOT EXISTS tx_runsdesk_totp (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    be_user int unsigned NOT NULL,
    secret text NOT NULL,
    confirmed tinyint unsigned NOT NULL DEFAULT 0,
    last_step bigint NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    tstamp int unsigned NOT NULL DEFAULT 0,
    secret_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(secret, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(secret, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    PRIMARY KEY (uid),
    UNIQUE KEY be_user (be_user),
    KEY secret_key_id (secret_key_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS tx_runsdesk_recovery_code (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    be_user int unsigned NOT NULL,
    code_hash char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    used_at int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY user_code (be_user, code_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
