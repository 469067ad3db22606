package runtime

import (
	"context"
	"encoding/json"
	"errors"

	"runsdesk/runtime/subject"
	"runsdesk/runtime/wait"
)

// ErrNotFound is returned by a Store or Catalog lookup that matched no row.
var ErrNotFound = errors.New("not found")

// ErrTokenExpired is a service account's token presented after its expiry.
var ErrTokenExpired = errors.New("token expired")

// ErrGuard is returned by a Store transition whose guarded UPDATE matched no row: the run was
// not in the state the transition requires (wrong status, lease owner or expiry). Nothing
// was changed.
var ErrGuard = errors.New("transition guard did not match")

// Lease names the holder of a run's lease and when it lapses (unix seconds). Now is the
// caller's clock reading, used for tstamp and for expiry comparisons.
type Lease struct {
	Owner   string
	Expires int64
	Now     int64
}

// NewRun is the data of a run being created. With Lease.Owner set the run is born running
// (claimed); otherwise it is born queued with QueuedRequest stored (docs/state-machine.md).
type NewRun struct {
	UUID                    string
	ConfigurationUID        int64
	ConfigurationIdentifier string
	BeUser                  int64
	// StartedByService names the service account that starts the run ("" for a person).
	StartedByService string
	QueuedRequest    string
	Lease            Lease
	Now              int64
	// Request holds the keys of an external request ("" fields are stored as none): CreateRun
	// refuses a second run with the same ExternalID in the configuration, or the same
	// IdempotencyKey of the same service account, with an error wrapping ErrDuplicate.
	Request RequestKeys
	// OnBehalfOf is the person an external request acts for (UserUID and Name; zero: none).
	OnBehalfOf Actor
	// CallbackURL is where an external request's decision is POSTed when it ends ("": none).
	CallbackURL string
}

// RequestKeys are what makes creating an external request idempotent: the caller's own id of
// it (unique in its configuration), the Idempotency-Key its service account sent (unique per
// service account), and Digest, the SHA-256 (hex) of the request as created, which tells a
// replay of it from a different request under a used key.
type RequestKeys struct {
	ExternalID     string
	IdempotencyKey string
	Digest         string
}

// ErrDuplicate is wrapped by CreateRun when a request key is already taken.
var ErrDuplicate = errors.New("duplicate request key")

// Suspension is the data of Suspend: the waiting status to enter, the sealed state, the
// names of the tools the pause is about (inbox filter), and the run's totals so far (shown
// while it waits; the final totals are written when it settles).
type Suspension struct {
	Status           Status
	State            string
	Tools            []string
	Iterations       int
	PromptTokens     int64
	CompletionTokens int64
	EstimatedCost    float64
	// Deadline is the pause's resolved waiting policy; nil: it waits for ever.
	Deadline *wait.Deadline
	// ElicitationExpires is when the remote server's request for input of an elicitation
	// pause expires (unix seconds; 0 = not an elicitation pause), a deadline step of its own.
	ElicitationExpires int64
	// Configuration is the run's configuration as the segment runs it, or nil: the pause's
	// `waiting` notifications go to its notify rules instead of rules read in the transaction.
	Configuration *Configuration
	// AdminOnly, with Configuration set, is whether the pause's first tool (Tools[0]) is
	// admin-only as the segment's registry has it; the notifications say so. Without
	// Configuration it is read from the stored tool definitions.
	AdminOnly bool
	// WaitingDue, when not 0, is when the pause's `waiting` notifications fall due (unix
	// seconds) instead of at once: the hold of a turn standing approvals are about to approve,
	// whose claim drops them (runtime.Rules.ReleaseWaiting makes them due when it does not).
	WaitingDue int64
	// Subject is the pause's inbox subject; the store keeps Subject.Stored in clear.
	Subject PauseSubject
	// Held marks an elicitation pause whose call a holder keeps open: its hold heartbeat
	// starts at the suspension's time (0 for any other pause).
	Held bool
}

// PauseSubject is the one-line subject of a pause (runtime/subject): Text as the
// configuration's template rendered it from the first pending call's arguments, or, without
// a template (Quoted set), those arguments rendered compactly; Tool is that call's tool.
type PauseSubject struct {
	Text   string
	Quoted bool
	Tool   string
}

// SubjectOf is the subject of a pause about calls under the configuration's subject template
// ("": none): filled from the first call's arguments. A template that does not parse (apply
// refuses one) renders nothing, so the tool name stands for it.
func SubjectOf(template string, calls []PendingCall) PauseSubject {
	if len(calls) == 0 {
		return PauseSubject{}
	}
	first := calls[0].Function
	p := PauseSubject{Tool: subject.Line(first.Name)}
	if template == "" {
		p.Text, p.Quoted = subject.Arguments(string(first.Arguments)), true
	} else if t, err := subject.Parse(template); err == nil {
		p.Text = t.Render(string(first.Arguments))
	}
	return p
}

// Stored is what a store keeps in clear: Text, except that a store sealing run states keeps
// only the tool name of a subject that quotes the arguments (Quoted), and of an empty one; a
// template decides for itself what it reveals.
func (p PauseSubject) Stored(sealing bool) string {
	if p.Text == "" || p.Quoted && sealing {
		return p.Tool
	}
	return p.Text
}

// Settlement is the terminal outcome written by Finish. PendingEffect is the write fence the
// settled row keeps: empty clears it; a run dead-lettered because a write's outcome was not
// recorded keeps the write's effect, as the reaper's dead-letter does.
type Settlement struct {
	Status           Status
	Iterations       int
	Truncated        bool
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	EstimatedCost    float64
	ErrorClass       string
	Reason           string
	PendingEffect    string
	// Output is the run's output to keep (RunOutput), "" for none: written with the
	// settlement, sealed like the state.
	Output string
	// Configuration is the run's configuration as the segment runs it, or nil: its notify
	// rules get the `finished` notifications instead of rules read in the transaction.
	Configuration *Configuration
}

// RunOutput is the output a finished run keeps (tx_runsdesk_run_output): Text is the model's
// final message and, for a completed run that ended on tool results, those results; Finished
// is when the run finished (unix seconds). The store leaves a Text that does not open as
// stored (an envelope: UnopenedKey names its key).
type RunOutput struct {
	Text     string
	Finished int64
}

// NewEvent is an event to append; its sequence is assigned by the store. Governance is the
// governance rows of the policy decisions the step carries out (a refused call, a model call
// whose usage was not trusted); Call, when not nil, is the call the step executed. The store
// writes them in the same transaction as the event, with the event's run, sequence and time.
type NewEvent struct {
	Run        int64
	Kind       string
	Round      int
	DurationMS float64
	Payload    []byte
	Now        int64
	Governance []GovernanceEvent
	Call       *ExecutedCall
	// Content is what the event said, kept beside it (never in Payload) when the run's
	// privacy mode keeps content (Keep); nil keeps none.
	Content *KeptContent
}

// ExecutedCall is one call a segment executed, stored (sealed like the run's state) with the
// tool event of the step that answered it: Sequence and Crdate are that event's. Proposed is
// the model's arguments (nil when they were not a JSON object), Approved the arguments an
// approval let run (nil when no approval decided the call), Effective the arguments the tool
// was sent, byte for byte. Each is a JSON object kept as text, so a mode that records digests
// only (an object such as {"sha256": "…"} in place of each) changes what the engine writes,
// not the row, its sealing or its readers.
type ExecutedCall struct {
	Run       int64
	Sequence  int
	CallID    string
	Tool      string
	Proposed  json.RawMessage
	Approved  json.RawMessage
	Effective json.RawMessage
	Crdate    int64
}

// Readable reports whether each of c's arguments is absent or a JSON object, as recorded: a
// stored value that did not open (or was altered) is neither, and is refused, never shown.
func (c ExecutedCall) Readable() bool {
	for _, raw := range []json.RawMessage{c.Proposed, c.Approved, c.Effective} {
		if raw != nil && !isJSONObject(raw) {
			return false
		}
	}
	return true
}

// Decision is one accepted approval or input submission, stored with the caller's
// idempotency key so that a replay returns the first outcome.
type Decision struct {
	UID            int64
	Run            int64
	IdempotencyKey string
	Kind           string // "approval" or "input"
	Approved       bool
	DecidedBy      int64
	// DecidedByService names the service account that decided (DecidedBy is then 0); "" for
	// a person.
	DecidedByService string
	Crdate           int64
	// Arguments is what an approval with edits stored about its calls (a JSON list written by
	// the engine, read back by EditedDecisions); "" for every other decision.
	Arguments string
	// Reason is why the decider decided, as they wrote it ("" when they gave none); sealed
	// at rest like Arguments when keys are set.
	Reason string
}

// CommitPlan is how one decision commits (Store.Commit), in one transaction that touches only
// its run's rows: guarded by the pause Read (status, suspended_at and suspended_state still as
// read; else runtime.ErrGuard and nothing is written), the writes each concern contributes —
// the Decision row, its Event (at the run's next sequence), the outbox rows of Notify for the
// rules of Configuration, one use of each standing approval of RuleUses, the Audit row and, for
// an input pause that resumes, the removal of its drafts — and whether the plan resumes the
// run or only records.
//
// A plan that resumes (Resume set) is the ClaimForResume transition: the run becomes running
// under Resume.Lease with Resume.Continuation in queued_request, its pause ended. A plan that
// only records (Resume nil: a vote, an assignment, a comment) leaves the run waiting on the
// same pause; its rows join the pause's history and the run's next event sequence moves on.
type CommitPlan struct {
	Read     Run
	Now      int64
	Resume   *Resume
	Decision Decision
	Event    NewEvent
	// Notify is the event whose notifications the plan enqueues ("" for none).
	Notify NotifyEvent
	Audit  *AuditRecord
	// RuleUses are the standing approvals this decision uses (an automatic approval), each
	// counted once in the same transaction by a guarded UPDATE (in force, uses below
	// max_uses); a rule that no longer counts refuses the whole plan as ErrRuleNotInForce.
	RuleUses []string
	// Configuration is the run's configuration as the decision read it, or nil: the plan's
	// notifications go to its notify rules instead of rules read again in the transaction.
	Configuration *Configuration
	// Assign, when set, changes the run's assignee; a plan that only assigns has no Decision
	// (Kind ""), writes no decision row and records.
	Assign *AssignChange
	// NotifyPeople are the addresses of the people a personal Notify event concerns (the new
	// assignee, the people a comment mentions), for the rules that mail people (none: those
	// rules send nothing).
	NotifyPeople []string
	// Vote, when set, is the approval vote this plan records on a turn that needs several
	// (runtime/quorum): its row, written first, under a guard that also reads the pause's vote
	// count as read (Read.Approvals) and moves it on, so of concurrent votes exactly one counts
	// at a time. The final vote's plan resumes; the others only record. A voter who already
	// voted on the pause is refused ErrAlreadyVoted.
	Vote *Vote
	// DropVotes removes the votes of the pause Read (an expiry ends it unapproved; an edit
	// voids them), before the plan's Vote is written.
	DropVotes bool
	// Comment, when set, is the comment this record-only plan stores beside its event (its
	// Sequence is the event's); a comment already stored under its (run, idempotency key) is
	// refused as ErrDuplicateComment and nothing is written.
	Comment *Comment
	// Replace, set with Vote and DropVotes on a plan that only records, is an edit-and-approve
	// on a turn that needs several approvals (EditOnPause): the pause's suspended_state and
	// subject are rewritten, and its vote count restarts at Vote's one.
	Replace *PauseReplacement
}

// PauseReplacement is the pending turn an edit makes: State, the encoded suspended state
// (sealed by the store as Suspend seals it), and the pause's Subject rendered from it.
type PauseReplacement struct {
	State   string
	Subject PauseSubject
}

// ErrDuplicateComment is wrapped by Commit when its Comment's idempotency key was used on the
// run: the comment was posted before (a replay).
var ErrDuplicateComment = errors.New("comment already stored under this idempotency key")

// Vote is one approval of a turn that needs several (runtime/quorum), on the run's pause
// number Pause, by Voter: "user:<uid>" for a person, "automatic" for the one service account
// or standing approval a turn may count (allow_automatic_vote). It keeps who voted
// (DecidedBy, DecidedByService, VoterName), the idempotency key it came with, the turn and pin
// digests it approved, the number of approvals the turn needed (Required) and when (Crdate).
type Vote struct {
	UID              int64
	Run              int64
	Pause            int64
	Voter            string
	VoterName        string
	DecidedBy        int64
	DecidedByService string
	IdempotencyKey   string
	TurnDigest       string
	PinDigest        string
	Required         int
	Crdate           int64
}

// EventVote records an approval counted toward a turn that needs several and leaves the run
// waiting: {approved, decidedBy, decidedByService?, votes, required}. The final vote is the
// turn's approval event, with its votes and required.
const EventVote = "vote"

// AuditVoted is the audit outcome of an approval counted as a vote that did not yet decide
// the turn (action approval).
const AuditVoted = "voted"

// ErrAlreadyVoted is wrapped by Commit when its Vote's voter already voted on the pause.
var ErrAlreadyVoted = errors.New("already voted on this pause")

// Resume is the claim of a plan that resumes its run: the lease it runs under and the
// continuation it runs.
type Resume struct {
	Lease        Lease
	Continuation string
}

// DecisionRead is what FindForDecision reads beside the run: its live configuration and the
// tool definitions' version (with the definitions when that version was not known), or Err,
// ConfigurationForDecision's error (ErrNotFound: the configuration is gone).
type DecisionRead struct {
	Configuration Configuration
	Tools         ToolsRead
	Err           error
}

// ErrRuleNotInForce is wrapped by Commit when a standing approval of RuleUses was
// revoked, expired or used up before its use could be counted (the claim was rolled back).
var ErrRuleNotInForce = errors.New("standing approval no longer in force")

// PauseStep is one step of a waiting run's deadline (RemindPause, EscalatePause,
// ExpirePause) with what commits with it, in one transaction on this run's rows: the guarded
// UPDATE of the pause Read (status and suspended_at as read, the step due at Now), its Event,
// its Audit row and, for the expiry that cancels, its Decision. Due is the run's next deadline
// step after this one (wait_due).
type PauseStep struct {
	Read     Run
	Now      int64
	Due      int64
	Event    NewEvent
	Audit    *AuditRecord
	Decision *Decision
}

// AuditNote asks for the audit row of an accepted decision to be written with the claim
// (ApprovalDecision.Audit, InputSubmission.Audit). Action, IP, Outcome and Reason are the
// caller's words for the row and never hold submitted values; the row's actor and run are the
// decision's. The runtime audits a refused or replayed attempt too, from the same note.
type AuditNote struct {
	Action  string
	IP      string
	Outcome string
	Reason  string
}

// AuditRecord is the audit row of an accepted decision: who decided and the caller's note.
type AuditRecord struct {
	Actor Actor
	AuditNote
}

// WaitingQuery selects waiting runs, longest-waiting first (suspended_at, uid ascending),
// with keyset pagination: rows strictly after (AfterSuspendedAt, AfterUID).
type WaitingQuery struct {
	Status           Status // "" = both pauses
	ConfigurationUID int64  // 0 = any
	Tool             string // "" = any
	WaitingSince     int64  // >0: only runs paused at or before this time
	UUIDPrefix       string
	// Search keeps runs whose uuid starts with it, or whose configuration (identifier or
	// name), one of the pause's tools, the pause's subject or who started the run (a
	// username, or a service account's name) contains it, as the database compares text
	// (case- and accent-insensitively); "" = any.
	Search           string
	AfterSuspendedAt int64
	AfterUID         int64
	Limit            int
	// ExpiringBefore > 0 keeps runs whose pause expires at or before it; Escalated keeps only
	// escalated pauses.
	ExpiringBefore int64
	Escalated      bool
	// ByExpiry lists the runs whose pause has an expiry, soonest first (expires_at, uid), the
	// keyset after (AfterExpiresAt, AfterUID) instead of the waiting order.
	ByExpiry       bool
	AfterExpiresAt int64
	// Assignee > 0 keeps the runs assigned to that uid; Unassigned (with Assignee 0) those
	// assigned to nobody.
	Assignee   int64
	Unassigned bool
}

// RecentQuery selects terminal runs, newest finished first, keyset after (BeforeFinishedAt,
// BeforeUID).
type RecentQuery struct {
	BeforeFinishedAt int64
	BeforeUID        int64
	Limit            int
}

// MaxCounted bounds how many waiting runs CountWaiting reads: past it the counts are lower
// bounds and WaitingCounts.Capped is set (the inbox shows "1000+").
const MaxCounted = 1000

// WaitingCounts are the number of waiting runs per pause kind. With Capped set, more than
// MaxCounted runs matched and the two numbers only cover the first MaxCounted+1 of them.
type WaitingCounts struct {
	Approval int
	Input    int
	Capped   bool
}

// Transitions are the run state machine's writes (docs/state-machine.md): each one guarded
// conditional statement, or CreateRun's insert, with the events and rows written beside it.
type Transitions interface {
	// CreateRun inserts a run: born running when in.Lease.Owner is set, else born queued.
	CreateRun(ctx context.Context, in NewRun) (Run, error)
	// FindRequest is the run holding the external id of configuration configurationUID or,
	// when externalID is "", the idempotency key of service account service, with its
	// request keys; ErrNotFound when none does.
	FindRequest(ctx context.Context, configurationUID int64, service string, keys RequestKeys) (Run, RequestKeys, error)
	// ClaimQueued is the claim: queued → running under lease, refused before the run's RetryAt.
	ClaimQueued(ctx context.Context, uid int64, lease Lease) error
	// Suspend pauses a run: running ∧ claimed_by=owner → a waiting status; clears the lease
	// and pending effect, stores the state and sets suspended_at; appends events with it.
	Suspend(ctx context.Context, uid int64, owner string, s Suspension, now int64, events ...NewEvent) error
	// Commit commits a decision by its plan, atomically (see CommitPlan): it resumes the run
	// (ClaimForResume) or records beside its pause. It returns the run as committed and the event.
	Commit(ctx context.Context, p CommitPlan) (Run, Event, error)
	// RenewLease renews the lease: running ∧ claimed_by=owner.
	RenewLease(ctx context.Context, uid int64, lease Lease) error
	// MarkPendingEffect sets (or, with "", clears) the write fence and renews.
	MarkPendingEffect(ctx context.Context, uid int64, lease Lease, effect string) error
	// Checkpoint stores a running segment's progress (state and the request a worker resumes
	// from) and renews the lease, clearing the write fence: running ∧ claimed_by=owner;
	// appends events with it.
	Checkpoint(ctx context.Context, uid int64, lease Lease, state, request string, events ...NewEvent) error
	// Requeue is the owner's requeue: running ∧ claimed_by=owner → queued, requeue_count+1,
	// claimable from retryAt (0 = at once). A run fenced for a non-idempotent write is never
	// requeued (ErrGuard): the write may have happened.
	Requeue(ctx context.Context, uid int64, owner string, now, retryAt int64) error
	// RequeueStale is the reaper's requeue: running ∧ 0<lease_expires<now → queued,
	// requeue_count+1; a fenced non-idempotent write is ErrGuard as for Requeue.
	RequeueStale(ctx context.Context, uid int64, now int64) error
	// DeadLetterStale fails a lapsed run: RequeueStale's guard → failed with reason, payloads blanked.
	DeadLetterStale(ctx context.Context, uid int64, reason string, now int64) error
	// Finish settles a run: non-terminal [∧ claimed_by=owner when owner≠""] → terminal, the fence
	// set to s.PendingEffect; appends events with it.
	Finish(ctx context.Context, uid int64, owner string, s Settlement, now int64, events ...NewEvent) error
	// Cancel cancels a run: non-terminal → cancelled; totals kept, claim, lease and payloads cleared.
	Cancel(ctx context.Context, uid int64, now int64) error
	// CancelWaiting is Cancel of a run that waits for a person (waiting_for_approval or
	// waiting_for_input); ErrGuard in any other status.
	CancelWaiting(ctx context.Context, uid int64, now int64) error
	// RecordCancelledTotals stores a segment's iterations, token totals and estimated cost on
	// its run after the run was cancelled under it: cancelled ∧ the stored totals not above
	// these.
	RecordCancelledTotals(ctx context.Context, uid int64, iterations int, prompt, completion int64, cost float64, now int64) error
	// AppendEvent stores an event at MAX(sequence)+1 for its run, in its own transaction.
	AppendEvent(ctx context.Context, e NewEvent) (Event, error)
	// AppendGovernance stores a governance row that belongs to no step, on its own.
	AppendGovernance(ctx context.Context, g GovernanceEvent) error
}

// RunReads read runs and their events as pages and the decision pipeline show them.
type RunReads interface {
	// FindByUUID returns the run or ErrNotFound.
	FindByUUID(ctx context.Context, uuid string) (Run, error)
	// FindForDecision is FindByUUID with, read in the same statement while both exist, what a
	// decision reads of the run's catalog: ConfigurationForDecision(run's configuration, known).
	FindForDecision(ctx context.Context, uuid, known string) (Run, DecisionRead, error)
	// FindByUID returns the run or ErrNotFound.
	FindByUID(ctx context.Context, uid int64) (Run, error)
	// Events returns the run's events with sequence > after, ascending.
	Events(ctx context.Context, runUID int64, after int) ([]Event, error)
	// MaxSequence returns the highest event sequence of the run, -1 if none.
	MaxSequence(ctx context.Context, runUID int64) (int, error)
	// GovernanceEvents returns the governance rows of the run, matched by its uid or its uuid
	// (the correlation id), oldest first (crdate, uid), at most MaxGovernanceRows.
	GovernanceEvents(ctx context.Context, runUID int64, uuid string) ([]GovernanceEvent, error)
	// ListWaiting returns one keyset page of waiting runs with what a list row shows: UID,
	// UUID, Status, ConfigurationUID, ConfigurationIdentifier, BeUser, StartedBy,
	// StartedByService, SuspendedState, PendingTools, Subject, SuspendedAt, ExpiresAt and
	// Escalated; the other fields are zero (read the run for them).
	ListWaiting(ctx context.Context, q WaitingQuery) ([]Run, error)
	// CountWaiting counts waiting runs per kind, with q's filters except Status and paging.
	CountWaiting(ctx context.Context, q WaitingQuery) (WaitingCounts, error)
	// ListRecent returns one keyset page of terminal runs.
	ListRecent(ctx context.Context, q RecentQuery) ([]Run, error)
	// ListRuns returns one keyset page of whole runs of one group (see RunsQuery).
	ListRuns(ctx context.Context, q RunsQuery) ([]Run, error)
}

// Scans find the runs the background loops act on: queued runs for the workers, lapsed
// leases for the reaper, due deadlines for the expirer, held pauses for their holders; and the
// deadline and hold transitions those loops make.
type Scans interface {
	// ListQueued returns up to limit uids of queued runs claimable at now (RetryAt <= now),
	// oldest first.
	ListQueued(ctx context.Context, now int64, limit int) ([]int64, error)
	// FindStale returns running runs whose lease lapsed before now, oldest lease first.
	FindStale(ctx context.Context, now int64, limit int) ([]Run, error)
	// FindDue returns waiting runs whose next deadline step is at or before now, earliest first.
	FindDue(ctx context.Context, now int64, limit int) ([]Run, error)
	// RemindPause records a pause's reminder (see PauseStep).
	RemindPause(ctx context.Context, st PauseStep) error
	// EscalatePause marks a pause escalated (see PauseStep).
	EscalatePause(ctx context.Context, st PauseStep) error
	// ExpirePause cancels an expired pause with reason expired (see PauseStep).
	ExpirePause(ctx context.Context, st PauseStep) error
	// RenewHold renews the hold heartbeat of a held pause to now: waiting_for_input ∧
	// suspended_at as held ∧ hold_heartbeat>0; ErrGuard when the run no longer waits on it.
	RenewHold(ctx context.Context, uid, suspendedAt, now int64) error
	// FindHolds reads the runs of uids as they are now, one statement for all: UID, UUID,
	// Status, ClaimedBy, SuspendedAt and HoldHeartbeat (the other fields zero); a run gone is
	// left out.
	FindHolds(ctx context.Context, uids []int64) ([]Run, error)
	// FindLapsedHolds returns up to limit runs waiting on a held pause whose hold heartbeat is
	// older than before (UID and UUID set), oldest heartbeat first.
	FindLapsedHolds(ctx context.Context, before int64, limit int) ([]Run, error)
}

// History reads what was decided and done on a run: decisions, votes, edits, reasons,
// executed calls, its output, its kept content and its comments.
type History interface {
	// FindDecision returns the decision stored for (run, key) or ErrNotFound.
	FindDecision(ctx context.Context, runUID int64, key string) (Decision, error)
	// LatestDecision returns the run's most recent decision or ErrNotFound.
	LatestDecision(ctx context.Context, runUID int64) (Decision, error)
	// Votes returns the votes recorded on the run's pause number pause, oldest first.
	Votes(ctx context.Context, runUID, pause int64) ([]Vote, error)
	// FindVote returns the vote stored for (run, key) or ErrNotFound.
	FindVote(ctx context.Context, runUID int64, key string) (Vote, error)
	// EditedDecisions returns the run's decisions with Arguments (approvals with edits),
	// oldest first.
	EditedDecisions(ctx context.Context, runUID int64) ([]Decision, error)
	// ReasonedDecisions returns the run's decisions with a Reason, oldest first.
	ReasonedDecisions(ctx context.Context, runUID int64) ([]Decision, error)
	// ExecutedCalls returns the run's executed calls in the order they were answered, their
	// arguments opened (a value that does not open is left as stored).
	ExecutedCalls(ctx context.Context, runUID int64) ([]ExecutedCall, error)
	// RunOutput returns the output run runUID (uuid) keeps, opened; false when it keeps none.
	RunOutput(ctx context.Context, runUID int64, uuid string) (RunOutput, bool, error)
	// EventContents returns the content run runUID (uuid) kept of its events, in event order,
	// opened; one sealed with a key the store lacks has SealedWith set instead.
	EventContents(ctx context.Context, runUID int64, uuid string) ([]StoredContent, error)
	// Comments returns the comments of run runUID (uuid) in timeline order, bodies opened.
	Comments(ctx context.Context, runUID int64, uuid string) ([]Comment, error)
	// FindComment returns the comment stored on run runUID (uuid) under key, or ErrNotFound.
	FindComment(ctx context.Context, runUID int64, uuid, key string) (Comment, error)
}

// People reads the people runs are assigned to and mention.
type People interface {
	// PersonByUsername returns the person named username as an actor (role, disabled), or
	// ErrNotFound.
	PersonByUsername(ctx context.Context, username string) (Actor, error)
	// Usernames returns the usernames of those uids that belong to a person (deleted ones
	// included); the others are absent.
	Usernames(ctx context.Context, uids []int64) (map[int64]string, error)
	// AssignmentLoads returns how many waiting runs each of uids holds (absent: none).
	AssignmentLoads(ctx context.Context, uids []int64) (map[int64]int, error)
}

// Store persists runs, events and decisions. Every transition is one guarded UPDATE whose
// success is exactly one affected row; a guard that matches nothing yields ErrGuard. A store
// failure is always returned as a wrapped error, never as an empty result.
//
// Suspend, Checkpoint and Finish take the events a segment recorded since its last write and
// append them (in order, at MAX(sequence)+1 onwards, each event's Run set to the run) in one
// transaction with the guarded UPDATE: the events and the progress they describe commit
// together, and a write that fails (ErrGuard included) writes no event either.
//
// It is the union of the interfaces above, each the part of it one concern of the runtime needs.
type Store interface {
	Transitions
	RunReads
	Scans
	History
	People
	Audits
}

// Audits appends the audit rows the runtime writes beside no transition: those of decision
// attempts refused or replayed (an accepted decision's row commits with it, CommitPlan.Audit).
type Audits interface {
	// AppendAudit appends rec as one audit row about run runUUID at now, its reason as given.
	AppendAudit(ctx context.Context, runUUID string, now int64, rec AuditRecord) error
}

// DecisionExpiry is the kind stored with the decision of an expiry (the system deciding a
// pause at its deadline), as opposed to a person's or a rule's.
const DecisionExpiry = "expiry"

// DecisionRequestChanges is the decision kind (and event kind) of a reviewer's request for
// changes to a paused turn (Runtime.RequestChanges): its text is the decision's reason.
const DecisionRequestChanges = "request_changes"
