package runtime

import "encoding/json"

// Status is a run's lifecycle state, stored verbatim in tx_nrllm_agentrun.status.
type Status string

// The seven statuses (docs/state-machine.md).
const (
	StatusQueued          Status = "queued"
	StatusRunning         Status = "running"
	StatusWaitingApproval Status = "waiting_for_approval"
	StatusWaitingInput    Status = "waiting_for_input"
	StatusCompleted       Status = "completed"
	StatusFailed          Status = "failed"
	StatusCancelled       Status = "cancelled"
)

// Valid reports whether s is one of the seven known statuses; an unknown stored value is
// never coerced into a known one.
func (s Status) Valid() bool {
	switch s {
	case StatusQueued, StatusRunning, StatusWaitingApproval, StatusWaitingInput,
		StatusCompleted, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// Terminal reports whether s is completed, failed or cancelled.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Waiting reports whether s is one of the two pauses.
func (s Status) Waiting() bool {
	return s == StatusWaitingApproval || s == StatusWaitingInput
}

// Termination reasons (docs/state-machine.md), stored in tx_nrllm_agentrun.termination_reason.
const (
	ReasonCompleted        = "completed"
	ReasonMaxIterations    = "max_iterations"
	ReasonBudgetExhausted  = "budget_exhausted"
	ReasonPolicyDenied     = "policy_denied"
	ReasonApprovalDenied   = "approval_denied"
	ReasonProviderFailed   = "provider_failed"
	ReasonCancelled        = "cancelled"
	ReasonRetriesExhausted = "retries_exhausted"
	ReasonNotRetryable     = "not_retryable"
	ReasonContextTruncated = "context_truncated"
	ReasonSuspendFailed    = "suspend_failed"
	ReasonExpired          = "expired"
	// ReasonDecided ends an external request once its decision is made: nothing runs after
	// it, the decision goes to the caller.
	ReasonDecided = "decided"
)

// Run is one row of tx_nrllm_agentrun. Times are unix seconds; 0 means unset.
type Run struct {
	UID                     int64
	UUID                    string
	Status                  Status
	ConfigurationUID        int64
	ConfigurationIdentifier string
	BeUser                  int64
	// StartedBy is BeUser's username as ListWaiting reads it ("" elsewhere, and for a run
	// without a person).
	StartedBy string
	// StartedByService is the service account that started the run (BeUser is then 0); ""
	// for a person.
	StartedByService string
	// OnBehalfOf is the person (uid) an external request's agent acts for, OnBehalfOfName
	// their username (0 and "": none); four-eyes counts them as the run's initiator.
	OnBehalfOf     int64
	OnBehalfOfName string
	// ExternalID is an external request's own id as its caller gave it ("" for none).
	ExternalID string
	// Subject is the current pause's one-line subject, stored in clear (PauseSubject); ""
	// while the run does not wait.
	Subject           string
	Iterations        int
	Truncated         bool
	PromptTokens      int64
	CompletionTokens  int64
	TotalTokens       int64
	EstimatedCost     float64
	ErrorClass        string
	TerminationReason string
	SuspendedState    string
	// StateStamp is the store's fingerprint of a sealed suspended_state as it was read; the
	// resume claim's guard compares it ("" for cleartext, and for a Run not read).
	StateStamp    string
	QueuedRequest string
	ClaimedBy     string
	LeaseExpires  int64
	RequeueCount  int
	PendingEffect string
	PendingTools  string
	StartedAt     int64
	FinishedAt    int64
	SuspendedAt   int64
	Tstamp        int64
	Crdate        int64
	// RetryAt is when a queued run may be claimed again after a retryable provider failure;
	// 0 = at once. Only meaningful while the run is queued.
	RetryAt int64
	// ExpiresAt, RemindAt and EscalateAt are the current pause's deadlines (0 = none; a
	// reminder already recorded is 0), Escalated whether it was escalated, and WaitPolicy
	// the actions its expiry takes (wait.EncodeDeadline). Set by Suspend; meaningful only
	// while the run waits.
	ExpiresAt  int64
	RemindAt   int64
	EscalateAt int64
	Escalated  bool
	WaitPolicy string
	// ElicitationExpires is when the remote server's request for input the run waits on
	// expires (unix seconds; 0 = none): the expirer answers it cancel then. Set by Suspend;
	// meaningful only while the run waits.
	ElicitationExpires int64
	// Expiry is what the latest expiry of one of the run's pauses did (deny, answer, cancel:
	// the action of its decision of kind DecisionExpiry), "" when none expired. Read by
	// FindByUUID and ListRecent, the reads that show a run to people and clients.
	Expiry string
	// HoldHeartbeat is when the holder of a held elicitation pause last renewed its hold
	// (unix seconds; 0 = the pause is not held). Set by Suspend, renewed by RenewHold.
	HoldHeartbeat int64
	// Assignee is the uid of the person the run is assigned to (0: none), AssigneeName their
	// username as it was when assigned, AssignedAt when (unix seconds); see Assigned.
	Assignee     int64
	AssigneeName string
	AssignedAt   int64
	// PauseNumber counts the run's pauses (each suspend adds one), so a vote names the pause
	// it is on; Approvals is how many votes that pause has recorded (see runtime/quorum).
	PauseNumber int64
	Approvals   int
}

// Event kinds of a run's timeline.
const (
	EventRequest   = "request"
	EventLLM       = "llm"
	EventTool      = "tool"
	EventAssembled = "assembled"
	EventContext   = "context"
	EventDropped   = "dropped"
	EventApproval  = "approval"
	EventInput     = "input"
	// EventElicitation is a decline or cancel of a remote server's request for input
	// (payload action, decidedBy, expired for the desk's cancel of an expired request).
	EventElicitation = "elicitation"
	// EventExpiry, EventReminder and EventEscalation record the steps of a pause's deadline
	// ({action, by}), never values.
	EventExpiry     = "expiry"
	EventReminder   = "reminder"
	EventEscalation = "escalation"
)

// Event is one row of tx_nrllm_agentrun_event. Sequence is dense and 0-based per run.
type Event struct {
	UID        int64
	Run        int64
	Sequence   int
	Kind       string
	Round      int
	DurationMS float64
	Payload    json.RawMessage
	Crdate     int64
}
