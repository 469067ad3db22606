-- Sign-in hardening. One change: usernames compared exactly, and a table of server secrets.
-- be_users.username: collation utf8mb4_bin (was the table's utf8mb4_unicode_ci, which is
--   accent- and case-insensitive). runsdesk stores the canonical form of every username
--   (db.CanonicalUsername: NFKC and case folding) and looks it up byte for byte, so
--   uniqueness, sign-in and throttling agree on who a name is. Existing usernames are
--   lower-cased first; the old case-insensitive unique key guarantees no two collide. A stored
--   name that differs from its canonical form in more than case (fullwidth or other
--   compatibility characters) no longer matches a sign-in until the person is re-created.
-- tx_runsdesk_secret is an addition (no upstream counterpart): keys the web processes share,
--   created once by whichever process needs one first.
--   name varchar(64) PRIMARY KEY: what the key is for ("login_form": the sign-in form's CSRF
--                                 token MAC).
--   secret char(64): 32 random bytes, hex.
--   crdate int unsigned: when it was created (unix seconds).
UPDATE be_users SET username = LOWER(TRIM(username)) WHERE username <> LOWER(TRIM(username));
ALTER TABLE be_users MODIFY username varchar(50) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '';

CREATE TABLE IF NOT EXISTS tx_runsdesk_secret (
    name varchar(64) NOT NULL,
    secret char(64) NOT NULL DEFAULT '',
    crdate int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;
