-- be_users: one column added relative to TYPO3 (and to 0006_accounts.sql):
--   password_change_required tinyint unsigned 0: 1 after `runsdesk user reset-password`; the
--   person is sent to /account/password at sign-in and may open no other page until they have
--   chosen a new password, which sets it back to 0. The migration runner records this file, so
--   a plain ALTER runs once.
ALTER TABLE be_users ADD COLUMN password_change_required tinyint unsigned NOT NULL DEFAULT 0;
