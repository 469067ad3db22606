-- be_users: one column added relative to TYPO3:
--   time_zone varchar(64) '': the IANA name of the time zone the person chose on their account
--   page (/account) for the absolute times pages show; '' shows them in UTC. The migration
--   runner records this file, so a plain ALTER runs once.
ALTER TABLE be_users ADD COLUMN time_zone varchar(64) NOT NULL DEFAULT '';
