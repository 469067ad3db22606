-- Single sign-on. One change: people linked to their identity provider's accounts.
-- tx_runsdesk_identity is an addition (no upstream counterpart): one row per person who signs in
--   with OpenID Connect, keyed by the provider's (issuer, subject), never by e-mail.
--   be_user int unsigned UNIQUE: the be_users row the identity signs in as.
--   issuer varchar(255), subject varchar(255): UNIQUE together, compared byte for byte.
--   access_token, refresh_token text: the provider's tokens of the last sign-in or check,
--     kept so the groups can be checked again during a session; never shown or logged.
--   token_expiry int unsigned: when the access token expires (unix seconds, 0: unknown).
--   checked_at int unsigned: when the provider last vouched for the person (unix seconds).
--   crdate, tstamp int unsigned: created and last changed (unix seconds).
CREATE TABLE IF NOT EXISTS tx_runsdesk_identity (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    be_user int unsigned NOT NULL,
    issuer varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    subject varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    access_token text NOT NULL,
    refresh_token text NOT NULL,
    token_expiry int unsigned NOT NULL DEFAULT 0,
    checked_at int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    tstamp int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY issuer_subject (issuer, subject),
    UNIQUE KEY be_user (be_user)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
