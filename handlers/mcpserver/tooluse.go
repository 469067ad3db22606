package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/handlers/api"
	"runsdesk/handlers/await"
	"runsdesk/runtime"
)

type toolUseArgs struct {
	ToolName      string          `json:"tool_name"`
	Input         json.RawMessage `json:"input"`
	ToolUseID     string          `json:"tool_use_id"`
	Configuration string          `json:"configuration"`
}

// permission is what Claude Code's permission-prompt tool answers: allow with the input to
// run, or deny with a message.
type permission struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// approveToolUse is Claude Code's permission prompt: it creates an approval request of
// tool_name with input and holds until a person decides, for at most the configuration's
// `wait: expires_after` (Config.ToolUseHold without one). It never answers pending and never
// allows what no one approved: a refusal, a full hall, a token refused during the hold or a
// hold that ends undecided denies, and the undecided request is withdrawn, so no one
// approves what the agent was told is denied (a decision that came first is answered).
func (s *Server) approveToolUse(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in toolUseArgs
	if err := decode(req, &in); err != nil {
		return deny("runsdesk could not ask: " + s.describe(err)), nil
	}
	if in.ToolName == "" {
		return deny("runsdesk could not ask: " + s.describe(invalid("tool_name is required"))), nil
	}
	k := callerOf(ctx)
	cfg, run, err := s.createIn(ctx, k, runtime.NewRequest{Configuration: in.Configuration, Kind: runtime.RequestApproval,
		Tool: in.ToolName, Arguments: in.Input, ExternalID: in.ToolUseID})
	if err != nil {
		return deny("runsdesk could not ask: " + s.describe(err)), nil
	}
	s.log.Info("mcp tool use asked", "service_account", k.actor.Name, "run", run.UUID)
	limit := cfg.Wait.ExpiresAfter
	if limit <= 0 {
		limit = s.toolUseHold
	}
	start := time.Now()
	ans, err := s.await(ctx, req, k, run.UUID, limit)
	if err == nil && ans.Status != runtime.RequestPending {
		return decided(ans, in.Input), nil
	}
	if ans = s.giveUp(ctx, k, run.UUID); ans.Status != runtime.RequestPending {
		return decided(ans, in.Input), nil
	}
	if err != nil {
		return deny("runsdesk could not wait for the decision: " + s.describe(err)), nil
	}
	return deny("no decision within " + spoken(time.Since(start))), nil
}

// giveUp withdraws an undecided request whose hold ended; the answer pending when it was
// withdrawn (or could not be), else the decision that came first. A decision that claimed the
// request just before the withdrawal is awaited (within await.ReadTimeout) until it settles,
// so the answer is that decision, never a denial of what was approved.
func (s *Server) giveUp(ctx context.Context, k *caller, id string) runtime.RequestAnswer {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), await.ReadTimeout)
	defer cancel()
	_, err := s.rt.WithdrawRequest(ctx, k.actor, id)
	k.audit(api.AuditRequestWithdraw, id, err)
	if err == nil {
		return runtime.RequestAnswer{ID: id, Status: runtime.RequestPending}
	}
	ans, err := await.Request(ctx, s.waiters, s.rt, k.actor, id, await.ReadTimeout, nil)
	if err != nil || ans.Decision == nil {
		return runtime.RequestAnswer{ID: id, Status: runtime.RequestPending}
	}
	return ans
}

// decided is the permission of a request's answer: allow with the edited arguments (else
// input as given) when approved, else deny saying who and why.
func decided(ans runtime.RequestAnswer, input json.RawMessage) *mcp.CallToolResult {
	d := ans.Decision
	switch {
	case d == nil:
		return deny("the request was " + ans.Status + " before anyone decided")
	case !d.Approved:
		who := d.DecidedByName
		if who == "" {
			who = d.DecidedByService
		}
		why := ans.Status + " by " + who
		if d.Reason != "" {
			why += ": " + d.Reason
		}
		return deny(why)
	case d.EditedArguments != nil:
		edited, _ := json.Marshal(d.EditedArguments)
		return answer(permission{Behavior: "allow", UpdatedInput: edited})
	}
	var compact bytes.Buffer
	if json.Compact(&compact, input) != nil || compact.Len() == 0 {
		compact.Reset()
		compact.WriteString("{}")
	}
	return answer(permission{Behavior: "allow", UpdatedInput: compact.Bytes()})
}

// deny is the permission that denies with message.
func deny(message string) *mcp.CallToolResult {
	return answer(permission{Behavior: "deny", Message: message})
}

// answer is p as the text Claude Code reads.
func answer(p permission) *mcp.CallToolResult {
	b, _ := json.Marshal(p)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}
