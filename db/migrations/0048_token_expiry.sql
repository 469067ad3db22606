-- Tokens that expire. Additions relative to upstream (upstream has no machine tokens):
--   tx_runsdesk_service_account.expires_at int unsigned 0: when the account's token stops
--     working (unix seconds; 0: never). `token create --expires 90d` sets it; a request with an
--     expired token is refused 401 token_expired.
--   tx_runsdesk_service_account.lifetime int unsigned 0: the seconds `--expires` gave the token
--     (0: none); `token rotate` gives the new token the same lifetime from the rotation on.
ALTER TABLE tx_runsdesk_service_account
    ADD COLUMN expires_at int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN lifetime int unsigned NOT NULL DEFAULT 0;
