-- An addition relative to upstream, for a remote server's request for input made in the
-- middle of a call and held open by one process while a person answers (docs/state-machine.md,
-- "The elicitation hold"):
--   tx_nrllm_agentrun.hold_heartbeat int unsigned 0: while the run waits on a held request,
--     when its holder last proved it still holds the call open (unix seconds). Suspend sets it
--     (now for a held pause, 0 for any other); the holder renews it; once it is older than the
--     hold's lapse, any process answers the request as ended. Meaningful only while the run
--     waits for input; the index serves that scan.
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN hold_heartbeat int unsigned NOT NULL DEFAULT 0,
    ADD INDEX holds (status, hold_heartbeat);
