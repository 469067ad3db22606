package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/strictjson"
	"runsdesk/runtime/tool"
)

// loop is the tool loop: ask the model; on a turn with tool calls, scan for
// approval first, then for input, else execute the calls in order; repeat.
func (s *segment) loop(ctx context.Context) outcome {
	for {
		if err := s.boundary(ctx); err != nil {
			return s.stop(ctx, err)
		}
		if s.iter >= s.maxIterations() {
			return s.settle(ctx, s.totals(runtime.StatusCompleted, runtime.ReasonMaxIterations, "", true))
		}
		if out, ended := s.withinLimits(ctx); ended {
			return out
		}
		started := time.Now()
		req := model.Request{Messages: s.msgs, Tools: s.reg.Specs(s.cfg.Tools)}
		resp, err := whileHeld(ctx, s, func(ctx context.Context) (model.Response, error) {
			return s.provider.Complete(ctx, req)
		})
		if err != nil {
			return s.stop(ctx, err)
		}
		s.iter++
		msg := resp.Message
		msg.Role = "assistant"
		resp.Message = msg
		s.countModelCall(req.Messages, resp, time.Since(started))
		s.msgs = append(s.msgs, msg)
		if len(msg.ToolCalls) == 0 {
			if out, ended := s.guardOutput(ctx, msg.Content); ended {
				return out
			}
			return s.settle(ctx, s.totals(runtime.StatusCompleted, runtime.ReasonCompleted, "", false))
		}
		calls := pendingCalls(msg.ToolCalls, s.argumentsBound)
		if out, ended := s.guardCalls(ctx, calls); ended {
			return out
		}
		if out, paused := s.scan(ctx, calls); paused {
			return out
		}
		steps := make([]planStep, len(calls))
		for i, c := range calls {
			steps[i] = s.planInLoop(c)
		}
		if err := s.checkpoint(ctx, steps); err != nil {
			return s.stop(ctx, err)
		}
		if err := s.runPlan(ctx, steps); err != nil {
			return s.stop(ctx, err)
		}
	}
}

// countModelCall adds the usage of the model call that read msgs and answered resp, taking d,
// to the segment's totals as countedUsage counts it, and records the call's llm event, with a
// usage_untrusted governance row when the provider's report was not believed.
func (s *segment) countModelCall(msgs []model.Message, resp model.Response, d time.Duration) {
	reported := resp.Usage
	var estimated bool
	var untrusted string
	resp.Usage, estimated, untrusted = countedUsage(msgs, resp.Message, reported)
	s.prompt += resp.Usage.PromptTokens
	s.compl += resp.Usage.CompletionTokens
	s.cost += s.cfg.Pricing.Cost(resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
	s.eventSaying(runtime.EventLLM, s.iter, d, llmPayload(resp, estimated), llmContent(resp.Message))
	if untrusted != "" {
		s.governStep(s.governance(governanceNote{Decision: runtime.GovernanceUsageUntrusted, Reason: untrusted,
			Detail: fmt.Sprintf("reportedPromptTokens=%d; reportedCompletionTokens=%d", reported.PromptTokens, reported.CompletionTokens)}, ""))
	}
}

// runPlan answers the planned calls in order, storing a checkpoint after each, so a segment
// recovered after a crash continues with the calls not yet answered.
func (s *segment) runPlan(ctx context.Context, steps []planStep) error {
	if err := s.boundary(ctx); err != nil {
		return err
	}
	for i, st := range steps {
		if err := s.call(ctx, st); err != nil {
			var el *elicited
			if errors.As(err, &el) {
				el.rest = steps[i+1:]
			}
			return err
		}
		s.govern(st)
		if err := s.checkpoint(ctx, steps[i+1:]); err != nil {
			return err
		}
	}
	return nil
}

// checkpoint stores the transcript and counters so far with the calls still to answer and the
// pending events, renews the lease and clears the write fence. A guard miss means the run was
// cancelled or the lease lost. After a non-idempotent write this is what records its outcome,
// so a store fault is then retried (retryStore) rather than the run handed back.
func (s *segment) checkpoint(ctx context.Context, remaining []planStep) error {
	st := runtime.SuspendedState{Messages: s.msgs, PauseState: runtime.PauseState{Iterations: s.iter, PromptTokens: s.prompt,
		CompletionTokens: s.compl, EstimatedCost: s.cost, AllowedToolNames: s.cfg.Tools}}
	state, err := st.Encode()
	if err != nil {
		return err
	}
	req, err := continuation{Kind: contPlan, Steps: remaining}.encode()
	if err != nil {
		return err
	}
	write := func() error {
		s.extendLease()
		return s.r.store.Checkpoint(context.WithoutCancel(ctx), s.run.UID, s.lease, state, req, s.pending...)
	}
	if s.fenced != "" {
		err = s.retryStore(write)
	} else {
		err = write()
	}
	if err == nil {
		s.stored()
	}
	return s.storeResult(ctx, err)
}

// scan pauses the run when an offered call needs approval (checked over the whole turn
// first) or, failing that, typed input (the first such call). A call whose arguments were
// refused never pauses the run: it is answered with the refusal.
func (s *segment) scan(ctx context.Context, calls []runtime.PendingCall) (outcome, bool) {
	for _, c := range calls {
		if t, ok := s.offeredTool(c.Function.Name); ok && c.ArgumentsError == "" && tool.NeedsApproval(t) {
			return s.suspend(ctx, runtime.StatusWaitingApproval, calls, nil, nil), true
		}
	}
	for _, c := range calls {
		t, ok := s.offeredTool(c.Function.Name)
		if !ok || c.ArgumentsError != "" {
			continue
		}
		raw, needs := tool.InputSchemaOf(t)
		if !needs {
			continue
		}
		if !schema.Usable(raw) {
			return s.fail(ctx, "UnusableInputSchema"), true
		}
		name := c.Function.Name
		return s.suspend(ctx, runtime.StatusWaitingInput, calls, &pauseInput{tool: name, schema: raw}, nil), true
	}
	return "", false
}

type pauseInput struct {
	tool        string
	schema      json.RawMessage
	elicitation *runtime.ElicitationPause
	// hold is the call held open for an in-session request (nil: none).
	hold *callHold
}

// firstToolAdminOnly is whether the first of names is an admin-only tool of the segment's
// registry.
func (s *segment) firstToolAdminOnly(names []string) bool {
	if len(names) == 0 {
		return false
	}
	t, ok := s.reg.Get(names[0])
	return ok && tool.IsAdminOnly(t)
}

func (s *segment) offeredTool(name string) (tool.Tool, bool) {
	if !s.offered[name] {
		return nil, false
	}
	return s.reg.Get(name)
}

// planInLoop plans a call of a turn that needs no person: executed, or refused (tool_denied)
// when its tool is not offered to the run.
func (s *segment) planInLoop(c runtime.PendingCall) planStep {
	if _, ok := s.offeredTool(c.Function.Name); !ok {
		return refused(c, fmt.Sprintf("Error: tool %q is not available to this run.", c.Function.Name),
			governanceNote{Decision: runtime.GovernanceToolDenied, Reason: runtime.ReasonToolNotOffered})
	}
	return planStep{Call: c}
}

// suspend stores the paused state with a guarded UPDATE (owner-checked); asks are the calls
// a guardrail wants approved. A pause that cannot be stored is never promised: the run is
// settled failed (SUSPEND_FAILED), or stays cancelled when a cancel won.
func (s *segment) suspend(ctx context.Context, status runtime.Status, calls []runtime.PendingCall, in *pauseInput,
	asks []runtime.GuardrailApproval) outcome {
	st := runtime.SuspendedState{Messages: s.msgs, PauseState: runtime.PauseState{
		PendingCalls: calls, Iterations: s.iter,
		PromptTokens: s.prompt, CompletionTokens: s.compl, EstimatedCost: s.cost,
		AllowedToolNames: s.cfg.Tools, CallPreviews: s.previews(ctx, calls), GuardrailApprovals: asks,
	}}
	pin := definitionPin(st.ToolNames(), s.reg, policyOf(s.cfg), s.r.digests)
	st.Definitions = &pin
	if in != nil {
		name := in.tool
		st.InputToolName = &name
		st.InputSchema = in.schema
		st.Elicitation = in.elicitation
	}
	var decider runtime.RuleDecider
	ruled := false
	if status == runtime.StatusWaitingApproval {
		decider, ruled = s.r.turnRules(ctx, s, st.PauseState)
	}
	now := s.r.unix()
	var hold *callHold
	if in != nil {
		hold = in.hold
	}
	enc, err := st.Encode()
	if err == nil {
		sp := runtime.Suspension{
			Status: status, State: enc, Tools: st.ToolNames(),
			Iterations: s.iter, PromptTokens: s.prompt, CompletionTokens: s.compl, EstimatedCost: s.cost,
			Deadline: s.pauseDeadline(calls, in, now), Configuration: &s.cfg, AdminOnly: s.firstToolAdminOnly(st.ToolNames()),
			Subject: s.subjectOf(calls), Held: hold != nil,
		}
		if st.Elicitation != nil {
			sp.ElicitationExpires = st.Elicitation.ExpiresAt
		}
		if ruled {
			sp.WaitingDue = now + ruleHold
		}
		err = s.r.store.Suspend(ctx, s.run.UID, s.lease.Owner, sp, now, s.pending...)
	}
	if err != nil {
		hold.end()
		if gerr := s.whyGuardMissed(ctx); gerr == errCancelled {
			return s.cancelled(ctx)
		}
		s.r.log.Error("suspend failed", "run", s.run.UUID, "err", err)
		s.settle(ctx, s.totals(runtime.StatusFailed, runtime.ReasonSuspendFailed, "SuspendFailed", false))
		return outcomeSuspendFailed
	}
	s.stored()
	if !ruled {
		s.r.autoAssign(context.WithoutCancel(ctx), s, s.firstToolAdminOnly(st.ToolNames()))
	}
	if hold != nil {
		hold.wait(s.run, now, st.Elicitation.ExpiresAt)
	}
	if status == runtime.StatusWaitingInput {
		return outcomeAwaitingInput
	}
	if ruled {
		s.r.approveByRule(context.WithoutCancel(ctx), s, st.PauseState, decider, now)
	}
	return outcomeAwaitingApproval
}

func (s *segment) previews(ctx context.Context, calls []runtime.PendingCall) []runtime.CallPreview {
	var out []runtime.CallPreview
	for i, c := range calls {
		t, ok := s.offeredTool(c.Function.Name)
		if !ok || c.ArgumentsError != "" {
			continue
		}
		p, ok := t.(tool.Previewer)
		if !ok {
			continue
		}
		lines, err := p.Preview(ctx, tool.Call{RunUUID: s.run.UUID, CallID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		switch {
		case err != nil:
			out = append(out, runtime.CallPreview{Index: i, Tool: c.Function.Name, Lines: []string{fmt.Sprintf("The preview failed (%T).", err)}, Failed: true})
		case len(lines) == 0:
			out = append(out, runtime.CallPreview{Index: i, Tool: c.Function.Name, Lines: []string{"The tool gave no preview."}, Failed: true})
		default:
			out = append(out, runtime.CallPreview{Index: i, Tool: c.Function.Name, Lines: lines})
		}
	}
	return out
}

// call answers one pending call as st plans it: with st.Refusal when non-empty, else by
// executing the tool with st.Args (nil = the model's arguments), or for st.Elicited by
// answering the server's request for input, under the heartbeat (whileHeld). Writes are
// fenced: the effect is stamped on the run (with the lease renewed) before the tool runs; the
// checkpoint that follows clears it, and until then a non-idempotent write is s.fenced. An
// answer to an elicitation is fenced as a non-idempotent write: its request state is sent at
// most once. A call whose server asks for input returns *elicited (the run pauses for it):
// a remote tool runs under a hold (callHold), so a request its server sends during the call
// pauses the run with the call held open. A call whose run was lost while it ran is not
// recorded; a held step is answered by callHeld.
func (s *segment) call(ctx context.Context, st planStep) error {
	if st.Held {
		return s.callHeld(ctx, st)
	}
	c, args, refusal := st.Call, st.Args, st.Refusal
	started := time.Now()
	if refusal == "" && args == nil && c.ArgumentsError != "" {
		refusal = argumentsRefusal(c)
	}
	var res tool.Result
	var executed *runtime.ExecutedCall
	if refusal != "" {
		res = tool.Result{Content: refusal, IsError: true}
	} else {
		t, _ := s.reg.Get(c.Function.Name)
		if args == nil {
			args = c.Function.Arguments
		}
		effect := tool.EffectOf(t)
		if st.Elicited != nil {
			effect = tool.EffectNonIdempotentWrite
		}
		if effect.IsWrite() {
			if err := s.fence(ctx, effect); err != nil {
				return err
			}
		}
		if err := s.r.hook(runtime.HookMidTool, s.run.UID); err != nil {
			return errAborted
		}
		tc := tool.Call{RunUUID: s.run.UUID, CallID: c.ID, Name: c.Function.Name, Arguments: args}
		var hold *callHold
		var err error
		res, err = whileHeld(ctx, s, func(ctx context.Context) (tool.Result, error) {
			if _, remote := t.(tool.RemoteTool); remote && st.Elicited == nil {
				hold = s.r.holds.begin(ctx, t, tc)
				return hold.await(ctx)
			}
			return invoke(ctx, t, tc, st.Elicited)
		})
		if err != nil {
			hold.end()
		}
		if interrupted(err) {
			return err
		}
		if err != nil {
			res = tool.Result{Content: fmt.Sprintf("Error: tool %q failed: %v", c.Function.Name, err), IsError: true}
		}
		if res.Elicitation != nil {
			st.Args = args
			el := &elicited{step: st, request: *res.Elicitation}
			if hold != nil && hold.pending != nil {
				el.hold = hold
			}
			return el
		}
		executed = executedCall(st, tc.Arguments)
	}
	d := time.Since(started)
	if refusal != "" {
		d = 0
	}
	s.record(st, args, res, d, executed)
	return nil
}

// record adds a call's result to the transcript and its tool event, taking d; the event names
// the governance reason of a refused call, and carries executed, the record of what the tool
// was sent when it ran (nil: it did not).
func (s *segment) record(st planStep, args json.RawMessage, res tool.Result, d time.Duration, executed *runtime.ExecutedCall) {
	c := st.Call
	s.msgs = append(s.msgs, model.Message{Role: "tool", ToolCallID: c.ID, Content: res.Content})
	payload := toolPayload(c, args, res)
	if st.Governance != nil {
		payload["refusal"] = st.Governance.Reason
	}
	s.eventSaying(runtime.EventTool, s.iter, d, payload, runtime.EventContent{Arguments: string(sentArguments(c, args)), Result: res.Content})
	s.pending[len(s.pending)-1].Call = executed
}

// executedCall is the record of st's call executed with sent, the arguments the tool was
// given, kept byte for byte: the model's arguments (none when they were not a JSON object; the
// model's, not an earlier vote's edit, when one rewrote the pending call),
// the approved ones when an approval let the call run (st.Args when it edited them), and sent.
func executedCall(st planStep, sent json.RawMessage) *runtime.ExecutedCall {
	c := st.Call
	ec := &runtime.ExecutedCall{CallID: c.ID, Tool: c.Function.Name, Effective: sent}
	if c.ArgumentsError == "" {
		ec.Proposed = c.Proposed()
	}
	switch {
	case st.Approved && st.Args != nil:
		ec.Approved = st.Args
	case st.Approved:
		ec.Approved = ec.Proposed
	}
	return ec
}

// invoke executes the call, or answers its server's request for input with answer.
func invoke(ctx context.Context, t tool.Tool, c tool.Call, answer *tool.ElicitationAnswer) (tool.Result, error) {
	if answer == nil {
		return t.Execute(ctx, c)
	}
	el, ok := t.(tool.Elicitor)
	if !ok {
		return tool.Result{IsError: true, Content: fmt.Sprintf("Error: tool %q can no longer take the answer to its request for input.", c.Name)}, nil
	}
	return el.Answer(ctx, c, *answer)
}

func (s *segment) fence(ctx context.Context, effect tool.Effect) error {
	s.extendLease()
	err := s.r.store.MarkPendingEffect(ctx, s.run.UID, s.lease, string(effect))
	if err == nil {
		s.held()
		if effect == tool.EffectNonIdempotentWrite {
			s.fenced = effect
		}
	}
	return s.storeResult(ctx, err)
}

// argumentsRefusal is the tool error told to the model of a call whose arguments were refused
// (c.ArgumentsError).
func argumentsRefusal(c runtime.PendingCall) string {
	if c.ArgumentsError == runtime.ArgumentsNotObject {
		return fmt.Sprintf("Error: the arguments for tool %q are not a valid JSON object.", c.Function.Name)
	}
	return fmt.Sprintf("Error: the arguments for tool %q were refused: %s.", c.Function.Name, c.ArgumentsError)
}

// pendingCalls converts the model's tool calls into pending calls with object arguments; a
// call whose arguments are longer than bound says for its tool is marked with ArgumentsError
// (answered with a tool error, never executed or shown whole).
func pendingCalls(tcs []model.ToolCall, bound func(name string) int) []runtime.PendingCall {
	out := make([]runtime.PendingCall, 0, len(tcs))
	for i, tc := range tcs {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		pc := runtime.PendingCall{ID: id, Type: "function", Function: runtime.PendingFunction{Name: tc.Function.Name, Arguments: json.RawMessage("{}")}}
		if n := bound(tc.Function.Name); len(tc.Function.Arguments) > n {
			pc.ArgumentsError = fmt.Sprintf("larger than %d bytes", n)
		} else if problem := argumentsProblem(tc.Function.Arguments); problem != "" {
			pc.ArgumentsError = problem
		} else if tc.Function.Arguments != "" {
			pc.Function.Arguments = json.RawMessage(tc.Function.Arguments)
		}
		out = append(out, pc)
	}
	return out
}

// argumentsProblem says why the model's arguments text is refused ("" when it is one JSON
// object, or empty): it is read as strictly as a request body (strictjson), so a key given
// twice at any depth is "duplicate key amount" (with " in payment" below the top level),
// never the last value silently.
func argumentsProblem(text string) string {
	if text == "" {
		return ""
	}
	var obj map[string]json.RawMessage
	err := strictjson.Decode([]byte(text), &obj)
	var se *strictjson.Error
	switch {
	case errors.As(err, &se) && se.Problem == strictjson.Duplicate && se.Path == "":
		return "duplicate key " + strictjson.Clip(se.Key)
	case errors.As(err, &se) && se.Problem == strictjson.Duplicate:
		return "duplicate key " + strictjson.Clip(se.Key) + " in " + strictjson.Clip(se.Path)
	case errors.As(err, &se):
		return se.Error()
	case err != nil || obj == nil:
		return runtime.ArgumentsNotObject
	}
	return ""
}

// argumentsBound is the bound on a call's arguments of the tool name (tool.MaxArgumentsBytes;
// the default for a tool the run does not know).
func (s *segment) argumentsBound(name string) int {
	if t, ok := s.reg.Get(name); ok {
		return tool.MaxArgumentsBytes(t)
	}
	return tool.DefaultMaxArgumentsBytes
}

// llmPayload is the privacy-filtered LLM step: metadata only, never content.
func llmPayload(resp model.Response, estimated bool) map[string]any {
	names := make([]string, 0, len(resp.Message.ToolCalls))
	for _, tc := range resp.Message.ToolCalls {
		names = append(names, tc.Function.Name)
	}
	p := map[string]any{
		"finishReason": resp.FinishReason, "promptTokens": resp.Usage.PromptTokens,
		"completionTokens": resp.Usage.CompletionTokens, "contentRedacted": true,
		"contentLength": len(resp.Message.Content), "requestedToolNames": names,
	}
	if estimated {
		p["usageEstimated"] = true
	}
	return p
}

// llmContent is what a model turn said: its text and the tool calls it asked for.
func llmContent(m model.Message) runtime.EventContent {
	c := runtime.EventContent{Text: m.Content}
	for _, tc := range m.ToolCalls {
		c.ToolCalls = append(c.ToolCalls, runtime.ContentCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return c
}

// toolPayload is the privacy-filtered TOOL step: no arguments, no result. A call a gate
// refused adds the governance reason as "refusal" (call).
func toolPayload(c runtime.PendingCall, args json.RawMessage, res tool.Result) map[string]any {
	return map[string]any{
		"toolName": c.Function.Name, "toolIsError": res.IsError, "contentRedacted": true,
		"argumentsLength": len(sentArguments(c, args)), "resultLength": len(res.Content),
	}
}

// sentArguments are the arguments of c's tool event: args, those the step ran (or refused)
// the call with, or the model's when it has none.
func sentArguments(c runtime.PendingCall, args json.RawMessage) json.RawMessage {
	if args == nil {
		return c.Function.Arguments
	}
	return args
}
