// Package runtime is the agent-run domain's vocabulary: runs and their statuses, events,
// actors, roles and the access rule (MayAct), the error catalogue (Error, Code), the stored
// suspended state and its decoding, the commands' inputs and outcome (ApprovalDecision,
// InputSubmission, Outcome), the read models pages show (RunView, Pause, Timeline), and the
// Store and Catalog interfaces package db implements. It executes nothing; it knows no HTTP
// framework and no SQL driver.
//
// The folder holds one package per job:
//
//   - runtime: the vocabulary (this package);
//   - runtime/engine: the Runtime, which executes the commands (start, approve, submit input,
//     cancel) through the one decision pipeline, runs segments on leased workers, reaps stale
//     runs, and builds the read models for pages (Get, Inbox, Timeline, Counts);
//   - runtime/model: the model providers a segment talks to;
//   - runtime/tool: tools, their registry and the capabilities the gates check;
//   - runtime/schema: input schemas: compiling, coercing and validating a submission, forms;
//   - runtime/strictjson: strict decoding of JSON documents into Go values;
//   - runtime/apply: applying a desk file (configurations and tools) to the catalog;
//   - runtime/demo: the demo desk's tools and its desk file.
//
// Only the engine and the wiring (cmd/web, bench) import runtime/engine; handlers call it
// through their Runtime interfaces (buildcheck's TestLayersDoNotImportUpwards).
//
// # Glossary
//
// One name per concept; where two types share a word, the package says which side of the
// store it is on.
//
//   - run: one tool-calling loop against a model (tx_nrllm_agentrun); its status is the state
//     machine of docs/state-machine.md.
//   - segment: the stretch of a run a worker executes under one lease, from a start or a
//     continuation to the next pause or the end.
//   - turn: one model answer and the tool calls it asks for; the pending calls are the calls
//     of the turn a pause waits on (PendingCall).
//   - pause: a run waiting for a person, of one kind: approval, input, or elicitation (an input
//     pause answering a remote server's request). Stored as the SuspendedState (PauseState is
//     its part without the transcript); read by pages as the read model Pause; wait.Traits is
//     only what the wait policy needs of it. PauseSubject is its one-line subject, PauseStep
//     one deadline step (reminder, escalation, expiry) taken on it.
//   - digest: the hash of what a person was shown (a turn's calls, an input pause's tool and
//     schema); a decision echoes it and is refused when it changed. pin: the digest of the tool
//     definitions pinned with the pause.
//   - decision: one verdict on a pause (approve, deny, submit, decline, cancel), by a person,
//     a service account, a rule (a standing approval: RuleActor) or the desk (an expiry:
//     ExpiryActor for a pause's deadline, ElicitationTimeoutActor for a remote request's). Each
//     decision kind runs the engine's one decision pipeline.
//   - commit plan: what a decision writes (CommitPlan): the guarded pause as read, the
//     decision row, event, outbox rows, audit row, rule uses, and whether it resumes the run
//     (Resume, a continuation under a lease) or only records; Store.Commit executes any plan.
//   - continuation: what a resumed run carries to its next segment: the decision's answer to
//     each pending call.
//   - lease: a worker's claim on a run for one segment, renewed by heartbeats and reaped when
//     stale.
//   - guard: the condition an UPDATE is made on (the pause or status as read); losing it means
//     another process or decision came first (ErrGuard), never an error of the store.
package runtime
