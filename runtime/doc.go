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
package runtime
