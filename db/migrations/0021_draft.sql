-- tx_runsdesk_draft: the half-filled values of an input form one person saved for one waiting
-- run ("Save draft", or the form's autosave), restored when that person opens the form again
-- from any device. An addition (upstream has no drafts):
--   run int unsigned: tx_nrllm_agentrun.uid of the waiting run.
--   be_user int unsigned: be_users.uid of the person (one draft per person and run).
--   pause_digest varchar(64): the digest of the pause the form was made for; a draft of
--                             another pause is never restored.
--   form_values mediumblob: the posted fields exactly as typed (URL-encoded), never read by
--                           the runtime, the model, events, the audit trail or logs; written
--                           and read only by Store.SaveDraft and Store.LoadDraft.
--   updated_at int unsigned: when it was last saved (unix seconds).
--   UNIQUE KEY run_user (run, be_user): the one draft of a person per run, and the run's
--   drafts for their removal when the pause ends (submit, cancel, expiry).
CREATE TABLE IF NOT EXISTS tx_runsdesk_draft (
    uid int unsigned NOT NULL AUTO_INCREMENT,
    run int unsigned NOT NULL DEFAULT 0,
    be_user int unsigned NOT NULL DEFAULT 0,
    pause_digest varchar(64) NOT NULL DEFAULT '',
    form_values mediumblob NOT NULL,
    updated_at int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (uid),
    UNIQUE KEY run_user (run, be_user)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;
