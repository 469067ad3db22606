-- tx_runsdesk_login_failure: one row per failed sign-in, for login throttling (sliding windows
-- per account and per client address). An addition (TYPO3 keeps failed logins in sys_log).
--   account_hash char(64): hex SHA-256 of the lower-cased, trimmed username as typed, so a
--                          password typed into the username field is never stored, and unknown
--                          usernames are throttled exactly like known ones.
--   ip varchar(45): the client address as text (IPv6 text form fits).
--   crdate int unsigned: when the attempt failed (unix seconds).
--   KEY account (account_hash, crdate), KEY ip (ip, crdate): the window lookups (bounded,
--   newest first); KEY crdate (crdate): the purge of rows older than the longest window.
CREATE TABLE IF NOT EXISTS tx_runsdesk_login_failure (
    uid bigint unsigned NOT NULL AUTO_INCREMENT,
    crdate int unsigned NOT NULL DEFAULT 0,
    account_hash char(64) NOT NULL DEFAULT '',
    ip varchar(45) NOT NULL DEFAULT '',
    PRIMARY KEY (uid),
    KEY account (account_hash, crdate),
    KEY ip (ip, crdate),
    KEY crdate (crdate)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;
