-- An addition relative to upstream, for the version of the live tool definitions a decision
-- reads (db/decision_catalog.go sqlToolsVersion):
--   tx_runsdesk_tool.definition_digest bigint unsigned, generated and stored: a 64-bit digest
--     of every column a tool definition is read from (each QUOTEd, so NULL and '' differ and
--     the list is unambiguous), written by the server with every INSERT or UPDATE of the row,
--     whoever makes it. The version then XORs one short digest per row (uid and this) instead
--     of hashing every definition's text on every decision. TestToolDefinitionDigestCoversTheColumns
--     fails when a column read into a definition is missing here.
ALTER TABLE tx_runsdesk_tool ADD COLUMN definition_digest bigint unsigned
    GENERATED ALWAYS AS (CAST(CONV(LEFT(SHA2(CONCAT_WS(',',
        QUOTE(name), QUOTE(description), QUOTE(parameters), QUOTE(input_schema), QUOTE(effect),
        QUOTE(admin_only), QUOTE(requires_approval), QUOTE(http_url), QUOTE(http_headers),
        QUOTE(http_timeout_ms), QUOTE(http_max_response_bytes), QUOTE(mcp_server), QUOTE(mcp_tool),
        QUOTE(mcp_annotations), QUOTE(mcp_digest), QUOTE(mcp_elicitation_timeout_ms),
        QUOTE(editable), QUOTE(wait_policy)), 256), 16), 16, 10) AS UNSIGNED)) STORED;
