// Package wait is the waiting policy of a pause: how long a waiting run may wait before it
// expires, what its expiry does (deny, answer, cancel, escalate), when a reminder is due, and
// how a configuration's policy and a tool's combine into the deadlines one pause is stored
// with. It knows nothing of storage or HTTP; package apply decodes and validates policies,
// package db stores them, the engine's expirer acts on the deadlines.
package wait

import (
	"encoding/json"
	"fmt"
	"time"
)

// Action is what an expiry does to a pause. There is no approve: an expiry never approves.
type Action string

// The expiry actions (AfterEscalation allows only Deny and Cancel).
const (
	Deny     Action = "deny"
	Answer   Action = "answer"
	Cancel   Action = "cancel"
	Escalate Action = "escalate"
)

// Valid reports whether a is one of the four actions.
func (a Action) Valid() bool {
	return a == Deny || a == Answer || a == Cancel || a == Escalate
}

// Policy is a `wait:` block of a configuration or a tool. The zero Policy is no policy: the
// pause waits for ever.
type Policy struct {
	ExpiresAfter    time.Duration   `json:"expires_after,omitempty"`
	OnExpiry        Action          `json:"on_expiry,omitempty"`
	RemindAfter     time.Duration   `json:"remind_after,omitempty"`
	EscalateAfter   time.Duration   `json:"escalate_after,omitempty"`
	AfterEscalation Action          `json:"after_escalation,omitempty"`
	Answer          json.RawMessage `json:"answer,omitempty"`
}

// IsZero reports whether p sets no expiry.
func (p Policy) IsZero() bool { return p.ExpiresAfter <= 0 }

// Encode is p as stored in a catalog column ("" for no policy).
func (p Policy) Encode() (string, error) {
	if p.IsZero() {
		return "", nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("wait policy: %w", err)
	}
	return string(b), nil
}

// Decode reads a policy stored by Encode; "" is the zero Policy. A stored policy that does
// not decode or names an unknown action is refused, never guessed.
func Decode(raw string) (Policy, error) {
	var p Policy
	if raw == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Policy{}, fmt.Errorf("wait policy: %w", err)
	}
	if !p.OnExpiry.Valid() || (p.AfterEscalation != "" && p.AfterEscalation != Deny && p.AfterEscalation != Cancel) {
		return Policy{}, fmt.Errorf("wait policy: unknown action %q / %q", p.OnExpiry, p.AfterEscalation)
	}
	return p, nil
}

// Traits is what the resolution needs to know about a pause: whether it waits for input
// (only then may an expiry answer) and whether any of its calls declares a write (then an
// expiry can only deny or cancel).
type Traits struct {
	Input bool
	Write bool
}

// Deadline is the resolved policy of one pause, stored with it: the times (unix seconds, 0 =
// none) of its reminder, its escalation and its expiry, and what the expiry does: Action, or
// AfterEscalation once the pause was escalated. Answer is the input an Answer expiry submits.
type Deadline struct {
	ExpiresAt       int64           `json:"-"`
	RemindAt        int64           `json:"-"`
	EscalateAt      int64           `json:"-"`
	Action          Action          `json:"action"`
	AfterEscalation Action          `json:"after_escalation,omitempty"`
	Answer          json.RawMessage `json:"answer,omitempty"`
}

// Resolve combines the configuration's policy cfg and the policy of the pause's tool
// (tool, zero when it sets none) into the deadline of a pause that began waiting at since.
// The tool's policy wins, except that the earlier expiry of the two applies. The floor holds
// whatever the policies say: an Answer on a pause that is not for input, or on one declaring
// a write, becomes Deny; an escalation of a write pause ends in Deny or Cancel. ok is false
// when neither sets an expiry.
func Resolve(cfg, tool Policy, p Traits, since int64) (Deadline, bool) {
	pol := tool
	if pol.IsZero() {
		pol = cfg
	}
	if pol.IsZero() {
		return Deadline{}, false
	}
	expires := pol.ExpiresAfter
	if !cfg.IsZero() && cfg.ExpiresAfter < expires {
		expires = cfg.ExpiresAfter
	}
	d := Deadline{ExpiresAt: since + seconds(expires), Action: pol.OnExpiry}
	if pol.RemindAfter > 0 && pol.RemindAfter < expires {
		d.RemindAt = since + seconds(pol.RemindAfter)
	}
	switch pol.OnExpiry {
	case Escalate:
		d.AfterEscalation = pol.AfterEscalation
		if d.AfterEscalation == "" {
			d.AfterEscalation = Deny
		}
		if pol.EscalateAfter > 0 && pol.EscalateAfter < expires {
			d.EscalateAt = since + seconds(pol.EscalateAfter)
		} else {
			d.Action = d.AfterEscalation
			d.AfterEscalation = ""
		}
	case Answer:
		if !p.Input || p.Write || len(pol.Answer) == 0 {
			d.Action = Deny
		} else {
			d.Answer = pol.Answer
		}
	case Deny, Cancel:
	default:
		d.Action = Deny
	}
	return d, true
}

// seconds rounds d up to whole seconds, at least one.
func seconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// Due is the time of the deadline's next step: the reminder while not yet sent, the
// escalation while not yet escalated, else the expiry.
func (d Deadline) Due(escalated bool) int64 {
	if escalated {
		return Earliest(d.ExpiresAt, d.RemindAt)
	}
	return Earliest(d.ExpiresAt, d.RemindAt, d.EscalateAt)
}

// Earliest is the earliest of times that is set (> 0), 0 when none is.
func Earliest(times ...int64) int64 {
	var due int64
	for _, t := range times {
		if t > 0 && (due == 0 || t < due) {
			due = t
		}
	}
	return due
}

// Final is what the expiry does: Action, or AfterEscalation once escalated.
func (d Deadline) Final(escalated bool) Action {
	if d.Action == Escalate {
		if escalated && (d.AfterEscalation == Deny || d.AfterEscalation == Cancel) {
			return d.AfterEscalation
		}
		return Deny
	}
	return d.Action
}

// EncodeDeadline is d's actions and answer as stored with the pause (the times have columns
// of their own).
func EncodeDeadline(d Deadline) (string, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("wait deadline: %w", err)
	}
	return string(b), nil
}

// DecodeDeadline reads the actions stored by EncodeDeadline; a stored value that does not
// decode or names an unknown action is refused.
func DecodeDeadline(raw string) (Deadline, error) {
	var d Deadline
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return Deadline{}, fmt.Errorf("wait deadline: %w", err)
	}
	if !d.Action.Valid() {
		return Deadline{}, fmt.Errorf("wait deadline: unknown action %q", d.Action)
	}
	return d, nil
}
