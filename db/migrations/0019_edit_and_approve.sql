-- Edit and approve (additions relative to upstream, one ALTER per table; the migration runner
-- records this file, so each runs once):
--   tx_runsdesk_tool.editable tinyint NOT NULL DEFAULT 0: a reviewer may edit a call's
--     arguments when approving it (`editable: true` in an apply file).
--   tx_runsdesk_decision.arguments mediumtext NOT NULL (no default: every INSERT supplies it):
--     for an approval with edits, the JSON list of the edited calls (call id, tool, proposed,
--     approved and effective arguments, the RFC 6902 patch, its digest and the changed paths),
--     so the run page shows them after the run has moved on; '' for every other decision.
--     Events never carry these values.
ALTER TABLE tx_runsdesk_tool ADD COLUMN editable tinyint unsigned NOT NULL DEFAULT 0;
ALTER TABLE tx_runsdesk_decision ADD COLUMN arguments mediumtext NOT NULL;
