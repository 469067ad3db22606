package apply

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// WaitSpec is the `wait:` of a configuration (defaults for its pauses) or of a tool (for its
// own pauses): when a waiting run expires, measured from when it started waiting, and what
// the expiry does.
type WaitSpec struct {
	ExpiresAfter    *Duration `yaml:"expires_after,omitempty"`
	OnExpiry        string    `yaml:"on_expiry,omitempty"`
	RemindAfter     *Duration `yaml:"remind_after,omitempty"`
	EscalateAfter   *Duration `yaml:"escalate_after,omitempty"`
	AfterEscalation string    `yaml:"after_escalation,omitempty"`
	Answer          JSON      `yaml:"answer,omitempty"`
}

// Bounds of a waiting policy.
const (
	maxWait        = 366 * 24 * time.Hour
	maxAnswerBytes = 1024
)

// wait checks the `wait:` s at path and returns the policy it stores (zero when absent). def
// is the tool it belongs to, nil for a configuration's. The floor: there is no approve; an
// answer exists only for an input tool, and must validate against its input schema (each
// failing field named by its path); a tool that declares a write can only deny or cancel
// (escalate ends in deny or cancel).
func (v *validator) wait(path string, s *WaitSpec, def *tool.Definition) wait.Policy {
	if s == nil {
		return wait.Policy{}
	}
	p := wait.Policy{OnExpiry: wait.Action(s.OnExpiry), AfterEscalation: wait.Action(s.AfterEscalation), Answer: rawJSON(s.Answer)}
	expires := v.waitDuration(joinKey(path, "expires_after"), s.ExpiresAfter, true)
	p.ExpiresAfter = expires
	p.RemindAfter = v.waitDuration(joinKey(path, "remind_after"), s.RemindAfter, false)
	p.EscalateAfter = v.waitDuration(joinKey(path, "escalate_after"), s.EscalateAfter, false)
	if expires > 0 && p.RemindAfter >= expires {
		v.c.add(joinKey(path, "remind_after"), "must be shorter than expires_after (%s)", expires)
	}
	action := joinKey(path, "on_expiry")
	switch p.OnExpiry {
	case "":
		v.c.add(action, "required: deny, answer, cancel or escalate")
	case "approve":
		v.c.add(action, "there is no approve: an expiry never approves; use deny, answer, cancel or escalate")
	case wait.Deny, wait.Cancel, wait.Escalate, wait.Answer:
	default:
		v.c.add(action, "must be deny, answer, cancel or escalate, not %q", s.OnExpiry)
	}
	v.escalation(path, p, s)
	if p.OnExpiry == wait.Answer {
		v.answer(path, p, def)
	} else if len(p.Answer) > 0 {
		v.c.add(joinKey(path, "answer"), "only with on_expiry: answer")
	}
	return p
}

// escalation checks escalate_after and after_escalation: only with on_expiry escalate,
// escalate_after then required and before expires_after, after_escalation deny or cancel.
func (v *validator) escalation(path string, p wait.Policy, s *WaitSpec) {
	esc, after := joinKey(path, "escalate_after"), joinKey(path, "after_escalation")
	if p.OnExpiry != wait.Escalate {
		if s.EscalateAfter != nil {
			v.c.add(esc, "only with on_expiry: escalate")
		}
		if s.AfterEscalation != "" {
			v.c.add(after, "only with on_expiry: escalate")
		}
		return
	}
	switch {
	case s.EscalateAfter == nil:
		v.c.add(esc, "required with on_expiry: escalate")
	case p.ExpiresAfter > 0 && p.EscalateAfter >= p.ExpiresAfter:
		v.c.add(esc, "must be shorter than expires_after (%s)", p.ExpiresAfter)
	}
	if p.AfterEscalation != "" && p.AfterEscalation != wait.Deny && p.AfterEscalation != wait.Cancel {
		v.c.add(after, "must be deny or cancel, not %q", s.AfterEscalation)
	}
}

// answer checks an answer expiry: a tool's, an input tool that declares no write, and an
// answer that validates against the tool's input schema.
func (v *validator) answer(path string, p wait.Policy, def *tool.Definition) {
	apath := joinKey(path, "answer")
	action := joinKey(path, "on_expiry")
	switch {
	case def == nil:
		v.c.add(action, "answer exists only for an input tool: put it in the tool's wait")
		return
	case len(def.InputSchema) == 0:
		v.c.add(action, "answer exists only for an input tool, and this tool has no input_schema")
		return
	case def.Effect.IsWrite() || def.RequiresApproval:
		v.c.add(action, "a tool that declares a write can only be denied or cancelled on expiry")
		return
	case len(p.Answer) == 0:
		v.c.add(apath, "required with on_expiry: answer (the input to submit, as a mapping)")
		return
	case len(p.Answer) > maxAnswerBytes:
		v.c.add(apath, "longer than %d bytes as JSON", maxAnswerBytes)
		return
	}
	sch, err := schema.Compile(def.InputSchema)
	if err != nil {
		return
	}
	var data map[string]any
	dec := json.NewDecoder(bytes.NewReader(p.Answer))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil || data == nil {
		v.c.add(apath, "must be a mapping of the input schema's fields")
		return
	}
	for _, fe := range sch.Validate(data) {
		field := apath
		for _, seg := range strings.Split(strings.TrimPrefix(fe.Pointer, "/"), "/") {
			if seg != "" {
				field = joinKey(field, seg)
			}
		}
		v.c.add(field, "does not match the tool's input_schema: %s", fe.Message)
	}
}

// waitDuration checks a duration of a waiting policy: positive, whole seconds or more, at
// most maxWait; required when asked.
func (v *validator) waitDuration(path string, d *Duration, required bool) time.Duration {
	switch {
	case d == nil && required:
		v.c.add(path, `required (a duration like "4h" or "30m")`)
		return 0
	case d == nil:
		return 0
	case time.Duration(*d) < time.Second || time.Duration(*d) > maxWait:
		v.c.add(path, "must be between 1s and %s", maxWait)
		return 0
	}
	return time.Duration(*d).Truncate(time.Second)
}

// waitEqual reports whether two policies would be stored as the same column.
func waitEqual(a, b wait.Policy) bool {
	ea, errA := a.Encode()
	eb, errB := b.Encode()
	return errA == nil && errB == nil && ea == eb
}
