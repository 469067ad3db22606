-- An addition relative to upstream, so the one expirer sweeps remote servers' requests for input
-- with the wait deadlines, on one indexed scan (db/expiry.go FindDue, KEY wait_due):
--   tx_nrllm_agentrun.elicitation_expires int unsigned 0: while the run waits on a remote
--     server's request for input (an elicitation pause), when that request expires; 0 = none.
--     Suspend sets it and counts it in wait_due (the earliest of the pause's deadline steps),
--     RemindPause and EscalatePause keep counting it, so FindDue reads an expired request
--     however many pauses wait before it; meaningful only while the run waits.
-- A pause stored before this migration in clear text gets it from its state here; a sealed one
-- keeps 0 and is answered cancel at the first late answer, as before.
ALTER TABLE tx_nrllm_agentrun ADD COLUMN IF NOT EXISTS elicitation_expires int unsigned NOT NULL DEFAULT 0;
UPDATE tx_nrllm_agentrun
    SET elicitation_expires = CAST(JSON_VALUE(suspended_state, '$.elicitation.expiresAt') AS UNSIGNED)
    WHERE status = 'waiting_for_input' AND JSON_VALID(suspended_state)
      AND JSON_VALUE(suspended_state, '$.elicitation.expiresAt') > 0;
UPDATE tx_nrllm_agentrun
    SET wait_due = IF(wait_due = 0, elicitation_expires, LEAST(wait_due, elicitation_expires))
    WHERE status = 'waiting_for_input' AND elicitation_expires > 0;
