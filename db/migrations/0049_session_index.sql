-- The index of signed-in sessions by person. Addition relative to upstream (the scs session
-- table has no owner column, and its tokens are stored hashed):
--   tx_runsdesk_session: one row per signed-in session, written at sign-in, for
--     /account/sessions ("sign out this one", "sign out all others"). A session whose row is
--     ended or gone is signed out at its next request.
--     session_id char(43) ascii UNIQUE: a random id the session's own data holds (never the
--       session token); the row a request's session belongs to.
--     be_user int unsigned: be_users.uid of the person. KEY be_user (be_user, last_seen).
--     epoch int unsigned: the person's session_epoch at sign-in; a row of an older epoch
--       belongs to a session already ended (password change, role change, disable).
--     crdate, last_seen int unsigned: sign-in, and the last request (written at most once a
--       minute per session), unix seconds.
--     expires_at int unsigned: when the session ends unless used again (idle timeout or
--       absolute lifetime, whichever is first, plus a minute); the session janitor deletes
--       rows past it. KEY expires_at.
--     ended_at int unsigned: when it was signed out from another session (0: open).
--     ip varchar(45): the client address of the last request written; user_agent
--       varchar(255): the browser's User-Agent at sign-in, cut to 255 bytes.
CREATE TABLE IF NOT EXISTS tx_runsdesk_session (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    session_id char(43) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    be_user int unsigned NOT NULL,
    epoch int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    last_seen int unsigned NOT NULL DEFAULT 0,
    expires_at int unsigned NOT NULL DEFAULT 0,
    ended_at int unsigned NOT NULL DEFAULT 0,
    ip varchar(45) NOT NULL DEFAULT '',
    user_agent varchar(255) NOT NULL DEFAULT '',
    PRIMARY KEY (uid),
    UNIQUE KEY session_id (session_id),
    KEY be_user (be_user, last_seen),
    KEY expires_at (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
