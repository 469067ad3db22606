-- Additions relative to upstream (upstream keeps its privacy mode in the extension's settings,
-- one for every configuration, and content redacted in the event payload itself):
--   tx_nrllm_configuration.privacy varchar(16) ascii 'metadata': the configuration's `privacy:`,
--     what its runs' events keep of their content in tx_runsdesk_event_content: 'metadata'
--     (nothing; counts and lengths stay in the event payload), 'redacted' (secrets masked, each
--     text capped) or 'full' (verbatim).
--   tx_nrllm_configuration.support_sees varchar(16) ascii 'redacted': the configuration's
--     `support_sees:`, whether support staff read the content kept under 'full' ('full') or only
--     that kept under 'redacted' ('redacted').
ALTER TABLE tx_nrllm_configuration
    ADD COLUMN privacy varchar(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'metadata',
    ADD COLUMN support_sees varchar(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'redacted';
