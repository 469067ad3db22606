-- tx_runsdesk_standing_approval: the standing approvals of `apply -f` (`standing_approvals:`),
-- an addition (upstream has no automatic approvals): name varchar(64) UNIQUE, tool
-- varchar(150) (tx_runsdesk_tool.name or a built-in tool), configuration varchar(150)
-- ('' = any configuration offering the tool), when_schema mediumtext (JSON Schema over the
-- call's arguments), until_at int unsigned (unix seconds, 0 = no end), max_uses int unsigned
-- (0 = no bound), allow_writes tinyint, author int unsigned (be_users.uid of who applied it,
-- 0 = unknown), uses int unsigned (automatic approvals made, counted with each approval's
-- claim), revoked int unsigned (when an apply without it revoked it, 0 = in force),
-- crdate, tstamp. KEY tool_revoked serves the lookup at suspend. Never stores arguments.
CREATE TABLE IF NOT EXISTS tx_runsdesk_standing_approval (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    tstamp int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    name varchar(64) NOT NULL DEFAULT '',
    tool varchar(150) NOT NULL DEFAULT '',
    configuration varchar(150) NOT NULL DEFAULT '',
    when_schema mediumtext NOT NULL,
    until_at int unsigned NOT NULL DEFAULT 0,
    max_uses int unsigned NOT NULL DEFAULT 0,
    allow_writes tinyint unsigned NOT NULL DEFAULT 0,
    author int unsigned NOT NULL DEFAULT 0,
    uses int unsigned NOT NULL DEFAULT 0,
    revoked int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY name (name),
    KEY tool_revoked (tool, revoked)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
