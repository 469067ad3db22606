-- An addition relative to upstream (upstream bounds no call's arguments):
--   tx_runsdesk_tool.max_arguments_bytes int unsigned 0: the bound on the JSON arguments of one
--     call of the tool, from its YAML key max_arguments_bytes; 0 means the default (64 KiB). A
--     model call over it is answered with a tool error, an edit over it is refused.
--   definition_digest is generated again with the new column among those it covers.
ALTER TABLE tx_runsdesk_tool
    ADD COLUMN max_arguments_bytes int unsigned NOT NULL DEFAULT 0 AFTER mcp_elicitation_timeout_ms,
    MODIFY COLUMN definition_digest bigint unsigned
    GENERATED ALWAYS AS (CAST(CONV(LEFT(SHA2(CONCAT_WS(',',
        QUOTE(name), QUOTE(description), QUOTE(parameters), QUOTE(input_schema), QUOTE(effect),
        QUOTE(admin_only), QUOTE(requires_approval), QUOTE(http_url), QUOTE(http_headers),
        QUOTE(http_timeout_ms), QUOTE(http_max_response_bytes), QUOTE(mcp_server), QUOTE(mcp_tool),
        QUOTE(mcp_annotations), QUOTE(mcp_digest), QUOTE(mcp_elicitation_timeout_ms),
        QUOTE(editable), QUOTE(wait_policy), QUOTE(max_arguments_bytes)), 256), 16), 16, 10) AS UNSIGNED)) STORED;
