-- Callbacks of external requests. Additions relative to upstream (upstream has no external
-- requests):
--   tx_nrllm_agentrun.callback_url varchar(2048) '': the http(s) URL a request's caller asked
--     the decision to be POSTed to ('' for none). When the run ends, the transition that ends
--     it writes an outbox row (channel callback) to it, signed with the secret of the variable
--     its configuration's callback_secret_env names; the decision itself is read when the row
--     is sent, never stored in the outbox.
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN callback_url varchar(2048) NOT NULL DEFAULT '';
