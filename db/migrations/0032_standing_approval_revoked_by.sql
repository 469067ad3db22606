-- An addition relative to upstream (upstream has no standing approvals):
--   tx_runsdesk_standing_approval.revoked_by varchar(16) NOT NULL DEFAULT '': who revoked a
--     revoked rule: 'apply' (an apply whose file no longer lists it) or 'cli' (`rules revoke
--     NAME`); '' while in force, and for rules revoked before this migration (by an apply). An
--     apply whose file still lists a rule the CLI revoked re-creates it and says so, since the
--     file is the whole set.
ALTER TABLE tx_runsdesk_standing_approval ADD COLUMN revoked_by varchar(16) NOT NULL DEFAULT '';
