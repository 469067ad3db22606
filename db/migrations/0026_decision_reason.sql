-- An addition relative to upstream, for the reason a decider gives:
--   tx_runsdesk_decision.reason text NOT NULL DEFAULT '': why the decider decided, as written
--     (at most 1,000 characters; '' when none was given), sealed like arguments when keys are
--     set. The timeline shows it to those who may read the run, and a denial's tool result
--     carries it to the model; the decision's event records only reasonGiven, never the text.
ALTER TABLE tx_runsdesk_decision ADD COLUMN reason text NOT NULL DEFAULT '';
