-- Addition relative to upstream (upstream shows no one who else looks at a run):
--   tx_runsdesk_presence: who had a waiting run's page open, and when they were last seen
--     (the page's load, then its heartbeat every 15 s), for "also here" on the run page. Best
--     effort: rows older than a minute mean nothing and are overwritten on the next visit.
--   PRIMARY KEY (run, be_user): one row per person and run.
CREATE TABLE IF NOT EXISTS tx_runsdesk_presence (
    run int unsigned NOT NULL,
    be_user int unsigned NOT NULL,
    seen_at int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (run, be_user)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
