// Package quorum is the M-of-N approval rule: how many distinct people must approve a turn
// (`approvals_required`, on a configuration or a tool) and whether an automatic approval may be
// one of them (`allow_automatic_vote`).
package quorum

import "fmt"

// MaxRequired is the most approvals a turn may require.
const MaxRequired = 5

// Policy is a configuration's or a tool's quorum keys: Required distinct approvals (0: not
// set, so 1 for a configuration and the configuration's for a tool) and whether one approval
// by a service account or a standing approval may count as one of them (AutomaticVote).
type Policy struct {
	Required      int
	AutomaticVote bool
}

// Check is an error when p.Required is neither 0 (not set) nor 1 to MaxRequired.
func (p Policy) Check() error {
	if p.Required < 0 || p.Required > MaxRequired {
		return fmt.Errorf("must be between 1 and %d, got %d", MaxRequired, p.Required)
	}
	return nil
}

// Of is what a turn needs: the largest Required among its calls' tools, each tool's own when
// set and the configuration's otherwise (at least 1); an automatic vote counts when every
// call allows it (its tool or the configuration sets AutomaticVote).
func Of(configuration Policy, tools []Policy) Policy {
	need := Policy{Required: max(configuration.Required, 1), AutomaticVote: configuration.AutomaticVote}
	if len(tools) == 0 {
		return need
	}
	need = Policy{Required: 1, AutomaticVote: true}
	for _, t := range tools {
		required := t.Required
		if required == 0 {
			required = max(configuration.Required, 1)
		}
		need.Required = max(need.Required, required)
		need.AutomaticVote = need.AutomaticVote && (t.AutomaticVote || configuration.AutomaticVote)
	}
	return need
}

// Quorate reports whether votes distinct approvals meet p.
func (p Policy) Quorate(votes int) bool { return votes >= max(p.Required, 1) }

// Multi reports whether p needs more than one approval (a vote that does not resume the run).
func (p Policy) Multi() bool { return p.Required > 1 }
