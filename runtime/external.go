package runtime

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
)

// ExternalPolicy is what `kind: external` sets on a configuration whose runs are requests
// that agents running elsewhere bring to the desk: no provider and no tool loop, only a
// decision delivered to the caller.
type ExternalPolicy struct {
	// Callers are the names of the service accounts that may create requests in it.
	Callers []string `json:"callers"`
	// AdHoc allows requests for tools it does not declare: an approval of any action name, or
	// a question with a schema given in the request.
	AdHoc bool `json:"ad_hoc,omitempty"`
	// CallbackHosts are the hosts a request's callback_url may name; CallbackSecretEnv the
	// environment variable holding the secret its callbacks are signed with, set exactly when
	// CallbackHosts is (read when a callback is sent, never stored).
	CallbackHosts     []string `json:"callback_hosts,omitempty"`
	CallbackSecretEnv string   `json:"callback_secret_env,omitempty"`
}

// Equal reports whether p and q are the same policy (callers and callback hosts compared in
// order).
func (p ExternalPolicy) Equal(q ExternalPolicy) bool {
	return p.AdHoc == q.AdHoc && slices.Equal(p.Callers, q.Callers) &&
		slices.Equal(p.CallbackHosts, q.CallbackHosts) && p.CallbackSecretEnv == q.CallbackSecretEnv
}

// AcceptsCallbacks reports whether c takes requests with a callback_url: it is external and
// names the secret its callbacks are signed with.
func (c Configuration) AcceptsCallbacks() bool {
	return c.External != nil && c.External.CallbackSecretEnv != ""
}

// MaxCallbackURLBytes bounds a request's callback_url.
const MaxCallbackURLBytes = 2048

// CallbackRefusal is why c refuses rawURL as a request's callback_url ("" when it takes it):
// an absolute http or https URL of at most MaxCallbackURLBytes, without credentials, whose
// host (port aside, compared without regard to case) is one of c's CallbackHosts.
func (c Configuration) CallbackRefusal(rawURL string) string {
	u, err := url.Parse(rawURL)
	switch {
	case len(rawURL) > MaxCallbackURLBytes:
		return "the callback_url is longer than 2048 bytes"
	case err != nil || u.Host == "" || u.Opaque != "":
		return "the callback_url is not an absolute URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "the callback_url must be an http or https URL"
	case u.User != nil:
		return "the callback_url must not carry credentials"
	case c.External == nil || !slices.ContainsFunc(c.External.CallbackHosts, func(h string) bool { return strings.EqualFold(h, u.Hostname()) }):
		return "the callback_url's host is not among the configuration's callback_hosts"
	}
	return ""
}

// MaxExternalPolicyBytes bounds an ExternalPolicy's JSON, as stored with its configuration
// (tx_nrllm_configuration.external is varchar(8192)).
const MaxExternalPolicyBytes = 8192

// IsExternal reports whether c is `kind: external`.
func (c Configuration) IsExternal() bool { return c.External != nil }

// AcceptsCaller reports whether service account name may create requests in c.
func (c Configuration) AcceptsCaller(name string) bool {
	return c.External != nil && name != "" && slices.Contains(c.External.Callers, name)
}

// The kinds of an external request: the approval of one proposed action, or input against
// a JSON Schema.
const (
	RequestApproval = "approval"
	RequestInput    = "input"
)

// NewRequest is what an agent running elsewhere asks the people of an external
// configuration: Kind RequestApproval of a call of Tool with Arguments, or RequestInput for
// the input Tool's schema asks (Arguments then say what for). Title, when set, is the
// request's inbox subject; Message is the caller's words beside it, shown as untrusted text.
type NewRequest struct {
	Configuration string
	Kind          string
	Tool          string
	Arguments     json.RawMessage
	Title         string
	Message       string
	// ExternalID is the caller's own id of the request, unique within the configuration;
	// IdempotencyKey the key of this creation, unique per service account. Either makes a
	// repeat of the same request return the run it created.
	ExternalID     string
	IdempotencyKey string
	// OnBehalfOf is the username of the person the agent acts for ("" for none): shown on
	// the card, and four-eyes refuses their approval where a second approver is required.
	OnBehalfOf string
	// Schema is the JSON Schema of an ad hoc question (Kind RequestInput, Tool one the
	// configuration does not declare, and it sets ad_hoc: true): stored with the pause, whose
	// form renders from it. Empty for every other request.
	Schema json.RawMessage
	// CallbackURL, when set, is where the decision is POSTed once the request ends
	// (Configuration.CallbackRefusal says which URLs its configuration takes).
	CallbackURL string
}

// The bounds of an ad hoc question's schema (NewRequest.Schema): its size, and the
// properties it declares, counted at every depth.
const (
	MaxAdHocSchemaBytes  = 64 << 10
	MaxAdHocSchemaFields = 200
)

// ErrUnusableSchema is wrapped by the CodeInvalidSchema error of an ad hoc question whose
// schema is unusable or out of bounds (the API answers it 422).
var ErrUnusableSchema = errors.New("the schema of an ad hoc question is unusable")

// MaxExternalIDBytes bounds a request's external id.
const MaxExternalIDBytes = 191

// MaxRequestTitleBytes bounds a request's title (its subject shows at most subject.MaxRunes
// of it); a message is bounded as a prompt is (MaxPromptBytes).
const MaxRequestTitleBytes = 1000

// The statuses of a request's answer (RequestAnswer.Status): pending while it waits; once
// decided, approved or denied (an approval) or answered (a question); expired when its wait
// policy's expiry ended it; cancelled when it ended without a decision (withdrawn by its
// caller, cancelled by a person, or failed before anyone could decide).
const (
	RequestPending   = "pending"
	RequestApproved  = "approved"
	RequestDenied    = "denied"
	RequestAnswered  = "answered"
	RequestExpired   = "expired"
	RequestCancelled = "cancelled"
)

// RequestAnswer is what the caller of an external request is answered about it: its status
// and, once decided (expiries included), the decision; Decision is nil while it is pending
// and for one that ended without a decision.
type RequestAnswer struct {
	ID         string           `json:"id"`
	ExternalID string           `json:"external_id"`
	Status     string           `json:"status"`
	Decision   *RequestDecision `json:"decision,omitempty"`
}

// RequestDecision is the decision on an external request: the verdict (Approved, true for an
// answered question too), the decider's reason, the values given for a question
// (Values), the arguments as a reviewer edited them (EditedArguments, nil when unedited), and
// who decided when: a person (DecidedBy, their be_users uid, and DecidedByName, their
// username) or not (DecidedBy 0 and DecidedByService: a service account, a standing approval
// as rule:<name>, or system:expiry).
type RequestDecision struct {
	Approved         bool           `json:"approved"`
	Reason           string         `json:"reason"`
	Values           map[string]any `json:"values,omitempty"`
	EditedArguments  map[string]any `json:"edited_arguments,omitempty"`
	DecidedBy        int64          `json:"decided_by"`
	DecidedByName    string         `json:"decided_by_name"`
	DecidedByService string         `json:"decided_by_service"`
	DecidedAt        int64          `json:"decided_at"`
}
