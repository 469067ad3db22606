package engine

import (
	"context"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// messageOverhead is the tokens the estimate adds to every message for its framing (role,
// separators), as chat formats spend a few per message.
const messageOverhead = 4

// estimateTokens is the estimated token count of one message: its text (role, content, tool
// call id, and each tool call's id, name and arguments) at four bytes per token, rounded up,
// plus messageOverhead.
func estimateTokens(m model.Message) int64 {
	n := len(m.Role) + len(m.Content) + len(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	return int64((n+3)/4) + messageOverhead
}

// estimateTranscript is the estimated token count of msgs, the sum of estimateTokens.
func estimateTranscript(msgs []model.Message) int64 {
	var n int64
	for _, m := range msgs {
		n += estimateTokens(m)
	}
	return n
}

// countedUsage is what a model call that read msgs and answered reply counts towards the run's
// totals: the provider's report u, with a count it left out (0) estimated as the context window
// estimates; a report with a negative count, or more than runtime.MaxCallTokens in all, is not
// believed: both counts are estimated and untrusted is the governance reason why ("" when the
// report was believed). estimated reports that a count is an estimate.
func countedUsage(msgs []model.Message, reply model.Message, u model.Usage) (counted model.Usage, estimated bool, untrusted string) {
	switch {
	case u.PromptTokens < 0 || u.CompletionTokens < 0:
		untrusted = runtime.ReasonUsageNegative
	case u.PromptTokens > runtime.MaxCallTokens || u.CompletionTokens > runtime.MaxCallTokens ||
		u.PromptTokens+u.CompletionTokens > runtime.MaxCallTokens:
		untrusted = runtime.ReasonUsageTooLarge
	}
	prompt, completion := u.PromptTokens, u.CompletionTokens
	if untrusted != "" || prompt == 0 {
		prompt, estimated = estimateTranscript(msgs), true
	}
	if untrusted != "" || completion == 0 {
		completion, estimated = estimateTokens(reply), true
	}
	return model.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}, estimated, untrusted
}

// dropCount is what fitWindow dropped: messages in all, the tool calls of dropped assistant
// turns and the tool results dropped with them, and the estimates before and after.
type dropCount struct {
	Messages    int
	ToolCalls   int
	ToolResults int
	Before      int64
	After       int64
}

// fitWindow drops the oldest non-system messages of msgs until the estimate is at most
// window, and returns what is kept (in order) and what was dropped; ok is false when even
// the system messages and the last group do not fit (then msgs is returned as it was).
// Messages are dropped in groups, never split: an assistant turn with tool calls together with
// the tool results that follow it; any other message on its own. System messages are never
// dropped, and neither is the last group: it is what the model is asked to answer.
func fitWindow(msgs []model.Message, window int64) ([]model.Message, dropCount, bool) {
	total := estimateTranscript(msgs)
	d := dropCount{Before: total, After: total}
	if total <= window {
		return msgs, d, true
	}
	groups := groupsOf(msgs)
	drop := make([]bool, len(msgs))
	for g := 0; g < len(groups)-1 && total > window; g++ {
		for _, i := range groups[g] {
			drop[i] = true
			total -= estimateTokens(msgs[i])
			d.Messages++
			d.ToolCalls += len(msgs[i].ToolCalls)
			if msgs[i].Role == "tool" {
				d.ToolResults++
			}
		}
	}
	if total > window {
		return msgs, dropCount{Before: d.Before, After: d.Before}, false
	}
	kept := make([]model.Message, 0, len(msgs)-d.Messages)
	for i, m := range msgs {
		if !drop[i] {
			kept = append(kept, m)
		}
	}
	d.After = total
	return kept, d, true
}

// groupsOf returns the droppable groups of msgs, oldest first, as message indexes: each
// non-system message on its own, except that the tool results following an assistant turn
// with tool calls belong to that turn's group.
func groupsOf(msgs []model.Message) [][]int {
	var groups [][]int
	inTurn := false
	for i, m := range msgs {
		switch {
		case m.Role == "system":
			inTurn = false
		case m.Role == "tool" && inTurn:
			groups[len(groups)-1] = append(groups[len(groups)-1], i)
		default:
			groups = append(groups, []int{i})
			inTurn = m.Role == "assistant" && len(m.ToolCalls) > 0
		}
	}
	return groups
}

// withinLimits prepares the next model call within the configuration's limits: with
// max_context_tokens set it drops the oldest messages the window cannot hold (recording a
// dropped event with the counts) and ends the run completed with context_truncated when the
// transcript cannot be made to fit; then it ends the run completed with budget_exhausted when
// the call would exceed the budget (the totals so far plus the call's estimated prompt, and
// its price). ended reports that the run was settled.
func (s *segment) withinLimits(ctx context.Context) (outcome, bool) {
	if w := int64(s.cfg.MaxContextTokens); w > 0 {
		kept, d, ok := fitWindow(s.msgs, w)
		if !ok {
			return s.settle(ctx, s.totals(runtime.StatusCompleted, runtime.ReasonContextTruncated, "", true)), true
		}
		if d.Messages > 0 {
			s.msgs = kept
			s.event(runtime.EventDropped, s.iter+1, 0, map[string]any{
				"droppedMessages": d.Messages, "droppedToolCalls": d.ToolCalls, "droppedToolResults": d.ToolResults,
				"estimatedTokensBefore": d.Before, "estimatedTokensAfter": d.After, "maxContextTokens": w,
			})
		}
	}
	next := estimateTranscript(s.msgs)
	if !s.cfg.Budget.Allows(s.prompt+s.compl, s.cost, next, s.cfg.Pricing) {
		return s.settle(ctx, s.totals(runtime.StatusCompleted, runtime.ReasonBudgetExhausted, "", true)), true
	}
	return "", false
}

// seedCounters continues the loop's counters (iterations, tokens, cost) from a stored state.
func (s *segment) seedCounters(st runtime.PauseState) {
	s.iter, s.prompt, s.compl, s.cost = st.Iterations, st.PromptTokens, st.CompletionTokens, st.EstimatedCost
}
