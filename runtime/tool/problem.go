package tool

import (
	"errors"
	"fmt"
)

// The rules a tool or a tool definition can break. Every problem New, Check and NewHTTP report
// is a *Problem whose Rule is one of these, so callers can test for a rule with errors.Is.
var (
	ErrNilTool               = errors.New("tool is nil")
	ErrInvalidName           = errors.New("name must be 1 to 64 characters from a-z, A-Z, 0-9, _ and -")
	ErrDuplicateName         = errors.New("name is registered more than once")
	ErrUnknownEffect         = errors.New("effect must be read_only, idempotent_write or non_idempotent_write")
	ErrInvalidParameters     = errors.New(`parameters must be a JSON object schema with "type": "object"`)
	ErrUnusableInputSchema   = errors.New("input schema is not usable: it needs a type or a non-empty properties map")
	ErrApprovalAndInput      = errors.New("a tool may not both need approval and require input: the approval pause would precede the input pause forever")
	ErrInvalidURL            = errors.New("url must be an absolute http or https URL with a host and without credentials")
	ErrInvalidTimeout        = errors.New("timeout must be positive and at most 5m (0 means 30s)")
	ErrInvalidResponseLimit  = errors.New("max response bytes must be positive and at most 16 MiB (0 means 1 MiB)")
	ErrInvalidArgumentsLimit = errors.New("max arguments bytes must be positive and at most 1 MiB (0 means 64 KiB)")
	ErrInvalidHeader         = errors.New("header must have a valid name and a value without control characters; ${NAME} references need a closing brace and a name of letters, digits and _")
)

// Problem is one rule broken by one tool or tool definition. Tool is the name as given (it may
// be empty or invalid); Field names the offending part in definition terms ("name", "effect",
// "parameters", "input_schema", "http.url", "http.timeout", "http.max_response_bytes",
// "max_arguments_bytes", "http.headers.<Name>"), empty when the problem concerns the whole tool; Rule is one of the
// Err* values above; Detail, possibly empty, says what was found. A Problem never quotes a
// header value.
type Problem struct {
	Tool   string
	Field  string
	Rule   error
	Detail string
}

// Error renders the problem as `tool "NAME": FIELD: RULE (DETAIL)`.
func (p *Problem) Error() string {
	msg := fmt.Sprintf("tool %q: ", p.Tool)
	if p.Field != "" {
		msg += p.Field + ": "
	}
	msg += p.Rule.Error()
	if p.Detail != "" {
		msg += " (" + p.Detail + ")"
	}
	return msg
}

// Unwrap returns the rule, so errors.Is(err, ErrApprovalAndInput) and the like work on a
// Problem and on the joined error New returns.
func (p *Problem) Unwrap() error { return p.Rule }
