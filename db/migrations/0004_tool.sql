-- tx_runsdesk_tool: data-defined HTTP tools (`apply -f`). Not in upstream (its tools are PHP
-- classes and MCP servers); the whole table is an addition:
--   name varchar(150) UNIQUE, description text, parameters mediumtext (JSON Schema of the
--   arguments), input_schema mediumtext (JSON Schema of the person's input, '' = none),
--   effect varchar(32) ('' = read_only), admin_only and requires_approval tinyint,
--   http_url varchar(2048), http_headers mediumtext (JSON object), http_timeout_ms int
--   (0 = 30 s), http_max_response_bytes int (0 = 1 MiB).
--   Text columns are NOT NULL (no default): every INSERT supplies them.
CREATE TABLE IF NOT EXISTS tx_runsdesk_tool (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    pid int unsigned NOT NULL DEFAULT 0,
    tstamp int unsigned NOT NULL DEFAULT 0,
    crdate int unsigned NOT NULL DEFAULT 0,
    deleted tinyint unsigned NOT NULL DEFAULT 0,
    name varchar(150) NOT NULL DEFAULT '',
    description text NOT NULL,
    parameters mediumtext NOT NULL,
    input_schema mediumtext NOT NULL,
    effect varchar(32) NOT NULL DEFAULT '',
    admin_only tinyint unsigned NOT NULL DEFAULT 0,
    requires_approval tinyint unsigned NOT NULL DEFAULT 0,
    http_url varchar(2048) NOT NULL DEFAULT '',
    http_headers mediumtext NOT NULL,
    http_timeout_ms int unsigned NOT NULL DEFAULT 0,
    http_max_response_bytes int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
