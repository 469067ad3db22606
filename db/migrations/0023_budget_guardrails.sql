-- Additions relative to upstream: a configuration's pricing, budget, context window and
-- guardrails (upstream keeps them elsewhere; runsdesk keeps them on the record, as it does the
-- provider). tx_nrllm_agentrun.estimated_cost decimal(10,6) exists since 0001, as upstream.
--   prompt_price_per_1k, completion_price_per_1k decimal(14,8) 0: the price of 1000 prompt /
--     completion tokens; 0 = free (every run costs 0).
--   max_total_tokens int unsigned 0: the most tokens (prompt + completion) one run may use over
--     all its segments; 0 = no bound.
--   max_cost decimal(10,6) 0: the most one run may cost (the width of estimated_cost); 0 = no
--     bound.
--   max_context_tokens int unsigned 0: the most tokens (estimated) a model call may send of the
--     transcript; 0 = no bound.
--   guardrails mediumtext: JSON list of {deny_pattern | http: {url, timeout_ms}, on: [...]};
--     '' for none (the default, so an INSERT that names only upstream's columns still works).
ALTER TABLE tx_nrllm_configuration
    ADD COLUMN prompt_price_per_1k decimal(14,8) NOT NULL DEFAULT 0,
    ADD COLUMN completion_price_per_1k decimal(14,8) NOT NULL DEFAULT 0,
    ADD COLUMN max_total_tokens int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN max_cost decimal(10,6) NOT NULL DEFAULT 0,
    ADD COLUMN max_context_tokens int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN guardrails mediumtext NOT NULL DEFAULT ('');
