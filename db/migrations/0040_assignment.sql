-- Additions relative to upstream (upstream has no assignment of waiting runs):
--   tx_nrllm_agentrun.assignee int unsigned 0: be_users.uid of the person the run is assigned to
--     (0: unassigned). It stays with the run across its pauses; a finished run's is not shown.
--   tx_nrllm_agentrun.assignee_name varchar(255) '': the assignee's username when assigned, so
--     lists and the API show it without a join.
--   tx_nrllm_agentrun.assigned_at int unsigned 0: when the assignment was made (unix seconds).
--   KEY waiting_assignee (assignee, suspended_at; InnoDB appends uid): the inbox's Mine and
--     Unassigned tabs, and its assignee filter, read one assignee's waiting runs in list order,
--     of both pause kinds or of one (its status filtered on the way).
--   tx_nrllm_configuration.assignment varchar(2048) '': the configuration's `assignment:` as JSON
--     ({"reviewers_may_assign": bool, "strict": bool}; '' for the defaults, both false).
ALTER TABLE tx_nrllm_agentrun
    ADD COLUMN assignee int unsigned NOT NULL DEFAULT 0,
    ADD COLUMN assignee_name varchar(255) NOT NULL DEFAULT '',
    ADD COLUMN assigned_at int unsigned NOT NULL DEFAULT 0,
    ADD KEY waiting_assignee (assignee, suspended_at);
ALTER TABLE tx_nrllm_configuration ADD COLUMN assignment varchar(2048) NOT NULL DEFAULT '';
