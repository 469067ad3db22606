package runtime

// Governance decisions runsdesk writes to the governance log (upstream's values).
const (
	// GovernanceToolDenied is a gate refusing a tool: a call not offered to the run or no
	// longer permitted, the calls of a denied turn, or a decider the tool gate refuses.
	GovernanceToolDenied = "tool_denied"
	// GovernanceWriteUnapproved is an input resume meeting an approval-bound call, which it
	// refuses.
	GovernanceWriteUnapproved = "write_unapproved"
	// GovernanceResponseBlocked is a guardrail denying the model's final text.
	GovernanceResponseBlocked = "response_blocked"
	// GovernanceApprovalRequired is a guardrail asking for a person's approval: of a call
	// (the run pauses) or of the final text (the run fails approval_denied).
	GovernanceApprovalRequired = "approval_required"
	// GovernanceUsageUntrusted is a model call whose reported usage was not believed: its
	// tokens were counted at the estimate instead.
	GovernanceUsageUntrusted = "usage_untrusted"
)

// Governance reasons: why a gate refused (GovernanceEvent.Reason).
const (
	ReasonToolNotOffered             = "toolNotOffered"
	ReasonToolNoLongerPermitted      = "toolNoLongerPermitted"
	ReasonDeniedByOperator           = "deniedByOperator"
	ReasonDeniedByExpiry             = "deniedByExpiry"
	ReasonInputResumeWithoutApproval = "inputResumeWithoutApproval"
	ReasonToolNotRegistered          = "toolNotRegistered"
	ReasonToolAdminOnly              = "toolAdminOnly"
	ReasonDeciderDisabled            = "deciderDisabled"
	ReasonServiceAccountSubmit       = "serviceAccountMayNotSubmit"
	ReasonServiceAccountWrite        = "serviceAccountMayNotApproveWrite"
	// ReasonGuardrailDenied: a guardrail answered deny (or a deny pattern matched).
	ReasonGuardrailDenied = "guardrailDenied"
	// ReasonGuardrailFailed: a guardrail failed, answered garbage or timed out, so it denied.
	ReasonGuardrailFailed = "guardrailFailed"
	// ReasonServiceAccountGuardrail: a service account tried to approve a turn a guardrail
	// asked a person to approve.
	ReasonServiceAccountGuardrail = "serviceAccountMayNotApproveGuardrail"
	// ReasonRuleGuardrail: a standing approval matched a turn a guardrail asked a person to
	// approve, which only a person may.
	ReasonRuleGuardrail = "standingApprovalMayNotApproveGuardrail"
	// ReasonGuardrailApproval: a guardrail answered require_approval.
	ReasonGuardrailApproval = "guardrailApprovalRequired"
	// ReasonUsageNegative: the provider reported a negative token count.
	ReasonUsageNegative = "usageNegative"
	// ReasonUsageTooLarge: the provider reported more than MaxCallTokens for one call.
	ReasonUsageTooLarge = "usageTooLarge"
)

// MaxGovernanceRows bounds how many governance rows Store.GovernanceEvents returns for a run.
const MaxGovernanceRows = 1000

// NoSequence is GovernanceEvent.Sequence of a row that follows no known step.
const NoSequence = -1

// GovernanceEvent is one row of the governance log (tx_nrllm_governance_event): a policy
// decision about a run, with names and codes only, never content (no arguments, results,
// prompts or submitted values). Run and CorrelationID (the run's uuid) both name the run;
// Sequence is the step the row follows: the step it was written with, or for a decider
// refused while the run waited the run's last step then (NoSequence when unknown). BeUser is the run's owner
// for a refusal inside the run, the refused decider for a decider gate (0 for a service
// account, which Detail then names). Detail is "key=value" pairs joined by "; ".
type GovernanceEvent struct {
	UID                     int64
	Run                     int64
	CorrelationID           string
	Sequence                int
	Decision                string
	Reason                  string
	Provider                string
	Model                   string
	ConfigurationIdentifier string
	BeUser                  int64
	ToolName                string
	Guardrail               string
	Detail                  string
	Crdate                  int64
}
