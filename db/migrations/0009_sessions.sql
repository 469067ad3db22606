-- sessions: the table of github.com/alexedwards/scs/mysqlstore, columns exactly as its README
-- (token CHAR(43) PRIMARY KEY, data BLOB NOT NULL, expiry TIMESTAMP(6) NOT NULL, index
-- sessions_expiry_idx on expiry). Not an upstream table. Differences from the README's DDL:
--   the index is declared inside CREATE TABLE (same index; re-runnable on MySQL, which lacks
--   CREATE INDEX IF NOT EXISTS);
--   COLLATE utf8mb4_bin: tokens are case-sensitive base64, so lookups must compare bytes.
CREATE TABLE IF NOT EXISTS sessions (
    token CHAR(43) PRIMARY KEY,
    data BLOB NOT NULL,
    expiry TIMESTAMP(6) NOT NULL,
    KEY sessions_expiry_idx (expiry)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
