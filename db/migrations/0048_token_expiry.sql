-- Tokens that expire. An addition relative to upstream (upstream has no machine tokens):
--   tx_runsdesk_service_account.expires_at int unsigned 0: when the account's token stops
--     working (unix seconds; 0: never). `token create --expires 90d` sets it; a request with an
--     expired token is refused 401 token_expired.
ALTER TABLE tx_runsdesk_service_account ADD COLUMN expires_at int unsigned NOT NULL DEFAULT 0;
