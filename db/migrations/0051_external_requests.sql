-- External requests. Additions relative to upstream (upstream runs only its own agents):
--   tx_nrllm_configuration.external varchar(8192) '': '' for an agent configuration; for a
--     `kind: external` one, the JSON of its runtime.ExternalPolicy ({"callers": [token
--     names], "ad_hoc": bool}): its runs are requests that service accounts named in callers
--     create, waiting from the start, with no provider and no tool loop.
ALTER TABLE tx_nrllm_configuration
    ADD COLUMN external varchar(8192) NOT NULL DEFAULT '';
