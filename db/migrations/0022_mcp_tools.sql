-- tx_runsdesk_tool: remote (MCP) tools (`apply -f` with mcp_servers and tools[].mcp). Upstream
-- keeps its servers in tx_nrllm_mcp_server; here each remote tool row carries its server's
-- connection (http_url, http_headers unexpanded, http_timeout_ms) and its server's operator
-- declaration (requires_approval), plus what apply read from the server's tools/list:
--   mcp_server varchar(150) ('' = not a remote tool), mcp_tool varchar(150) (the tool's name
--   on the server), mcp_annotations mediumtext (JSON, '' = none), mcp_digest varchar(64) (hex
--   SHA-256 of the listed description, input schema and annotations; a call is refused when
--   the server's current listing has another digest), mcp_elicitation_timeout_ms int unsigned
--   (0 = 15 min). Description and parameters hold the listed description and input schema.
-- mcp_annotations is NOT NULL without a default, as the other text columns: every INSERT
-- supplies it (existing rows get the empty text). The migration runner records this file, so a
-- plain ALTER runs once.
ALTER TABLE tx_runsdesk_tool
    ADD COLUMN mcp_server varchar(150) NOT NULL DEFAULT '',
    ADD COLUMN mcp_tool varchar(150) NOT NULL DEFAULT '',
    ADD COLUMN mcp_annotations mediumtext NOT NULL,
    ADD COLUMN mcp_digest varchar(64) NOT NULL DEFAULT '',
    ADD COLUMN mcp_elicitation_timeout_ms int unsigned NOT NULL DEFAULT 0;
