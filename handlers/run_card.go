package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// Arguments longer than this many lines or bytes are collapsed behind <details>.
const (
	longArgumentLines = 12
	longArgumentBytes = 800
)

// pendingCard describes a waiting run for the run page's viewer: its calls, badges and
// previews, and the form the viewer may use. What the viewer may do, and the notes saying why
// not, are the engine's own decision gate for them (view.Pause.Gate, from Get): the card hides
// exactly what a decision would refuse (Approve on a four-eyes run the viewer started, or on
// a write the viewer's role may not approve).
func (h *Handlers) pendingCard(c echo.Context, view runtime.RunView, cfgs configIndex) *views.PendingCard {
	m := &cardMaker{h: h, c: c, actor: h.actor(c), cfgs: cfgs, now: h.now()}
	return m.card(view)
}

// cardMaker makes a pending card (see pendingCard) for its viewer.
type cardMaker struct {
	h     *Handlers
	c     echo.Context
	actor runtime.Actor
	cfgs  configIndex
	now   time.Time
}

// card describes view as pendingCard does.
func (m *cardMaker) card(view runtime.RunView) *views.PendingCard {
	run := view.Run
	card := &views.PendingCard{
		RunUUID: run.UUID, Configuration: m.cfgs.label(run), Status: string(run.Status),
		Input: run.Status == runtime.StatusWaitingInput, Now: m.now,
		Expires: unixTime(run.ExpiresAt), Escalated: run.Escalated, OnBehalfOf: run.OnBehalfOfName,
	}
	if run.SuspendedAt > 0 {
		card.Since = time.Unix(run.SuspendedAt, 0)
	}
	p := view.Pause
	if unreadable(view) {
		card.Unreadable = true
		return card
	}
	card.InputTool = p.InputTool
	for _, ch := range p.Changes {
		card.Changes = append(card.Changes, views.DefinitionChangeView{Tool: ch.Tool, Field: ch.Field, Was: ch.Was, Now: ch.Now, Setting: ch.Setting()})
	}
	card.Words = views.ModelWords{Text: p.ModelText}
	if cfg, ok := m.cfgs.byUID[run.ConfigurationUID]; ok && cfg.IsExternal() {
		card.Words.Caller = run.StartedByService
	}
	if card.Input {
		canSubmit := m.maySubmit(view, card)
		card.Calls = callViews(p, false, canSubmit)
		m.inputPart(view, card, canSubmit)
		return card
	}
	card.Calls = callViews(p, true, false)
	if p.Gate.Access != nil {
		return card
	}
	card.Notes = append(card.Notes, gateNotes(p.Gate, "approve")...)
	card.Approval = &views.ApprovalForm{
		Action: views.RunPath(run.UUID) + "/approval", CSRF: m.h.csrfToken(m.c), Digest: p.Digest,
		IdempotencyKey: newToken(), CanApprove: p.Gate.Refusal() == nil, PinDigest: p.PinDigest,
	}
	mayApprove := card.Approval.CanApprove
	edits := mayApprove && m.offerEdits(run.UUID, p, card)
	if q := p.Quorum; q != nil {
		card.Votes = votesView(*q, p.Edit)
		card.Approval.CanApprove = mayApprove && !q.Voted
		if edits {
			card.Votes.Voids = len(q.Votes)
		}
	}
	return card
}

// votesView is the card's view of a turn's approvals so far and of the edit that made its
// pending calls what they are (edit nil: the model's calls).
func votesView(q runtime.PauseQuorum, edit *runtime.PauseEdit) *views.VotesView {
	v := &views.VotesView{Required: q.Required, Voted: q.Voted}
	for _, vote := range q.Votes {
		v.Voters = append(v.Voters, views.VoterView{Name: vote.VoterName, At: time.Unix(vote.Crdate, 0)})
	}
	if edit != nil {
		v.Edited = &views.VoterView{Name: edit.ByName, At: time.Unix(edit.At, 0)}
	}
	return v
}

// offerEdits links "Edit and approve" on each call the viewer, who may approve the turn, may
// also edit, as the engine's gate says (p.Gate.Editable), and reports whether it linked any.
// On a turn that needs several approvals an edit is a vote that voids the others (the card
// says how many), so the viewer's own approval does not keep them from editing.
func (m *cardMaker) offerEdits(uuid string, p *runtime.Pause, card *views.PendingCard) bool {
	linked := false
	for i, call := range p.PendingCalls {
		if slices.Contains(p.Gate.Editable, call.ID) {
			card.Calls[i].EditHref = views.EditCallPath(uuid, call.ID)
			linked = true
		}
	}
	return linked
}

// maySubmit reports whether the viewer may submit input to view's pause; when their role could
// but the engine's gate refuses, the card's notes say why.
func (m *cardMaker) maySubmit(view runtime.RunView, card *views.PendingCard) bool {
	g := view.Pause.Gate
	if g.Access != nil {
		return false
	}
	card.Notes = append(card.Notes, gateNotes(g, "submit input to")...)
	return g.Refusal() == nil
}

// inputPart completes an input pause's card with its form, read-only unless the viewer may
// submit (canSubmit, maySubmit's answer); then it offers "Save draft" and shows their draft.
func (m *cardMaker) inputPart(view runtime.RunView, card *views.PendingCard, canSubmit bool) {
	form := m.h.inputFormProps(m.c, view)
	if canSubmit && view.Pause.Form != nil {
		form.Draft.Action = views.RunPath(view.Run.UUID) + "/draft"
		m.h.restoreDraft(m.c.Request().Context(), m.actor, view, &form)
	}
	card.Form = &form
}

// unreadable reports whether a waiting run's pause cannot be shown: its state could not be
// read, or it has no pending call.
func unreadable(view runtime.RunView) bool {
	return view.Unreadable != "" || view.Pause == nil || len(view.Pause.PendingCalls) == 0
}

// gateNotes are the card's words for each refusal of the engine's gate g (Refusals), verb
// naming the decision ("approve", "submit input to").
func gateNotes(g runtime.DecisionGate, verb string) []string {
	out := make([]string, 0, len(g.Refusals))
	for _, e := range g.Refusals {
		out = append(out, gateNote(e, verb))
	}
	return out
}

// gateNote is the card's words for one refusal of the engine's gate: four-eyes, or the decider
// tool gate's reason and tool (the timeline's words for a reason no person meets).
func gateNote(e *runtime.Error, verb string) string {
	if e.Code == runtime.CodeSelfApprovalDenied {
		return refusal.FourEyes
	}
	var reason, name string
	if g := e.GateDenial; g != nil {
		reason, name = g.Reason, g.ToolName
	}
	switch reason {
	case runtime.ReasonToolNotRegistered:
		return fmt.Sprintf("Nobody may %s this turn: the tool “%s” is not registered.", verb, name)
	case runtime.ReasonToolNoLongerPermitted:
		return fmt.Sprintf("Nobody may %s this turn: the tool “%s” is no longer enabled for this configuration.", verb, name)
	case runtime.ReasonToolAdminOnly:
		return fmt.Sprintf("Only an admin may %s this turn: the tool “%s” is admin-only.", verb, name)
	}
	why := governanceReasons[reason]
	if why == "" {
		why = string(e.Code)
	}
	return fmt.Sprintf("You may not %s this turn: %s.", verb, why)
}

// toolNames are the distinct tools of the pending calls and the input tool, in order.
func toolNames(p *runtime.Pause) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, call := range p.PendingCalls {
		add(call.Function.Name)
	}
	add(p.InputTool)
	return out
}

// callViews describes each pending call: its tool, badges, arguments (indented JSON, shown as
// escaped text) and, on approval cards, for each call that needs the approval, the preview
// captured for it. canSubmit words the input tool's badge for a viewer who may submit.
func callViews(p *runtime.Pause, approval, canSubmit bool) []views.PendingCallView {
	out := make([]views.PendingCallView, len(p.PendingCalls))
	for i, call := range p.PendingCalls {
		name := call.Function.Name
		v := callArguments(name, call.Function.Arguments)
		v.Badges, v.ArgumentsError = toolBadges(name, p.Tools[name], name == p.InputTool, canSubmit), call.ArgumentsError
		if info := p.Tools[name]; approval && (info.NeedsApproval || !info.Registered) {
			v.Preview = previewOf(p.Previews, i, name)
		}
		for _, g := range p.Guardrails {
			if approval && g.Index == i && g.Tool == name {
				v.Guardrail = &views.GuardrailView{Reason: g.Reason}
			}
		}
		out[i] = v
	}
	return out
}

// callArguments is a call of tool name with its arguments as a card shows them: indented JSON
// (escaped by the page), collapsed when long.
func callArguments(name string, arguments json.RawMessage) views.PendingCallView {
	args := prettyJSON(arguments)
	lines := strings.Count(args, "\n") + 1
	return views.PendingCallView{Tool: name, Arguments: args, Lines: lines, Long: lines > longArgumentLines || len(args) > longArgumentBytes}
}

// previewOf is the preview captured for call i when its tool matches; a call without one is
// decided without a preview.
func previewOf(previews []runtime.CallPreview, i int, name string) *views.PreviewView {
	for _, pv := range previews {
		if pv.Index == i && pv.Tool == name {
			return &views.PreviewView{Lines: pv.Lines, Failed: pv.Failed}
		}
	}
	return &views.PreviewView{}
}

// toolBadges are the badges of a call to name; the input tool's badge asks for the viewer's
// input only when they may submit it (canSubmit), and otherwise just says the run waits.
func toolBadges(name string, info runtime.ToolInfo, input, canSubmit bool) []views.Badge {
	var out []views.Badge
	if !info.Registered {
		return append(out, views.Badge{Label: "Tool not registered", Icon: "?", Tone: "danger"})
	}
	if !info.Offered {
		out = append(out, views.Badge{Label: "No longer enabled", Icon: "⊘", Tone: "danger"})
	}
	switch info.Effect {
	case tool.EffectNonIdempotentWrite:
		out = append(out, views.Badge{Label: "Writes (not repeatable)", Icon: "✎", Tone: "attention"})
	case tool.EffectIdempotentWrite:
		out = append(out, views.Badge{Label: "Writes", Icon: "✎", Tone: "attention"})
	}
	if info.AdminOnly {
		out = append(out, views.Badge{Label: "Admin only", Icon: "◆", Tone: "neutral"})
	}
	switch {
	case input && canSubmit:
		out = append(out, views.Badge{Label: "Needs your input", Icon: "✎", Tone: "accent"})
	case input:
		out = append(out, views.Badge{Label: "Waiting for input", Icon: "◷", Tone: "neutral"})
	}
	return out
}

// prettyJSON indents a JSON value for reading, keeping its key order, and shows <, > and &
// as themselves rather than the \u003c escapes stored JSON carries (the page escapes them);
// anything that is not JSON is returned as is.
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return unescapeHTMLEscapes(b.String())
}

// unescapeHTMLEscapes turns the escapes \u003c, \u003e and \u0026 of valid JSON text back
// into <, > and &, leaving every other escape (an escaped backslash included) as it is.
func unescapeHTMLEscapes(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch strings.ToLower(s[i+2 : i+6]) {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2])
		i++
	}
	return b.String()
}
