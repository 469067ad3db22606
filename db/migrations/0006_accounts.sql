-- Who may sign in: people (be_users, TYPO3's backend-user table) and machine clients
-- (tx_runsdesk_service_account). One change: the two account tables.
-- be_users keeps TYPO3's column names (uid, pid, tstamp, crdate, username, password, admin,
-- disable, deleted, realName, email, lastlogin). Additions relative to TYPO3:
--   role varchar(16) 'support': admin / reviewer / support (DESIGN "Who may do what").
--   session_epoch int unsigned 0: bumped to end every session of the user at once.
--   UNIQUE KEY username (username) (TYPO3: plain KEY).
-- tx_runsdesk_service_account is an addition (no upstream counterpart): name UNIQUE,
-- token_hash char(64) UNIQUE (hex SHA-256 of the token; the token itself is never stored),
-- scopes varchar(255) (comma-joined run,read,approve,cancel), disabled, lastused.
CREATE TABLE IF NOT EXISTS be_users (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    pid int unsigned NOT NULL DEFAULT 0,
    tstamp int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    username varchar(50) NOT NULL DEFAULT '',
    password varchar(255) NOT NULL DEFAULT '',
    admin tinyint unsigned NOT NULL DEFAULT 0,
    disable tinyint unsigned NOT NULL DEFAULT 0,
    deleted tinyint unsigned NOT NULL DEFAULT 0,
    realName varchar(80) NOT NULL DEFAULT '',
    email varchar(255) NOT NULL DEFAULT '',
    lastlogin int unsigned NOT NULL DEFAULT 0,
    role varchar(16) NOT NULL DEFAULT 'support',
    session_epoch int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY username (username)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS tx_runsdesk_service_account (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    crdate int unsigned NOT NULL DEFAULT 0,
    tstamp int unsigned NOT NULL DEFAULT 0,
    name varchar(100) NOT NULL DEFAULT '',
    token_hash char(64) NOT NULL DEFAULT '',
    scopes varchar(255) NOT NULL DEFAULT '',
    disabled tinyint unsigned NOT NULL DEFAULT 0,
    lastused int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY name (name),
    UNIQUE KEY token_hash (token_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
