-- tx_runsdesk_run_output: the output of a finished run, one row per run: the model's final
-- message, and for a completed run that ends on a tool, that tool's result. An addition
-- (upstream returns the loop's result to its caller and keeps nothing):
--   run int unsigned: tx_nrllm_agentrun.uid of the finished run (one output per run).
--   output_text mediumtext: the output, sealed (package seal) while keys are set; '' once
--                           retention removed it.
--   finished_at int unsigned: when the run finished (unix seconds), as the run's finished_at.
--   output_text_key_id varchar(32) ascii: STORED generated, the key id of a sealed output_text
--                                         (NULL for cleartext), as for every sealed column.
--   UNIQUE KEY run (run): the one output of a run.
--   KEY finished (finished_at, uid): retention's scan of outputs past their age.
CREATE TABLE IF NOT EXISTS tx_runsdesk_run_output (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    run int unsigned NOT NULL,
    output_text mediumtext NOT NULL,
    finished_at int unsigned NOT NULL DEFAULT 0,
    output_text_key_id varchar(32) CHARACTER SET ascii COLLATE ascii_bin
        AS (IF(LEFT(output_text, 8) = 'rdseal1:', CONVERT(LEFT(SUBSTRING_INDEX(SUBSTRING(output_text, 9), ':', 1), 32) USING ascii), NULL)) STORED,
    PRIMARY KEY (uid),
    UNIQUE KEY run (run),
    KEY finished (finished_at, uid),
    KEY output_text_key_id (output_text_key_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
