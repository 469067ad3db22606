package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// Arguments longer than this many lines or bytes are collapsed behind <details>.
const (
	longArgumentLines = 12
	longArgumentBytes = 800
)

// pendingCard describes a waiting run for the viewer: its calls, badges and previews, and the
// form the viewer may use. level 2 is the inbox's card (an h2, a link to the run page, an
// input form behind a link to the run page's); 3 the run page's (an h3, the input form in
// place). The runtime still enforces every rule the card anticipates (the card only hides
// what would be refused: Approve on a four-eyes run the viewer started, or on a write the
// viewer's role may not approve).
func (h *Handlers) pendingCard(c echo.Context, view runtime.RunView, cfgs configIndex, level int) *views.PendingCard {
	return h.cards(c, cfgs, level).card(view)
}

// cardMaker makes the pending cards of one page (see pendingCard) for its viewer.
type cardMaker struct {
	h     *Handlers
	c     echo.Context
	actor runtime.Actor
	cfgs  configIndex
	level int
	now   time.Time
	// forms remembers, by schema text, whether an input schema yields a form.
	forms map[string]bool
}

// cards returns the maker of the page's cards at heading level (see pendingCard).
func (h *Handlers) cards(c echo.Context, cfgs configIndex, level int) *cardMaker {
	return &cardMaker{h: h, c: c, actor: h.actor(c), cfgs: cfgs, level: level, now: h.now(), forms: map[string]bool{}}
}

// card describes view as pendingCard does.
func (m *cardMaker) card(view runtime.RunView) *views.PendingCard {
	run := view.Run
	card := &views.PendingCard{
		RunUUID: run.UUID, Configuration: m.cfgs.label(run), Status: string(run.Status),
		Input: run.Status == runtime.StatusWaitingInput, Now: m.now, HeadingLevel: m.level, Link: m.level <= 2,
	}
	if run.SuspendedAt > 0 {
		card.Since = time.Unix(run.SuspendedAt, 0)
	}
	p := view.Pause
	if view.Unreadable != "" || p == nil || len(p.PendingCalls) == 0 {
		card.Unreadable = true
		return card
	}
	card.InputTool = p.InputTool
	card.Calls = callViews(p, !card.Input)
	if card.Input {
		m.inputPart(view, card)
		return card
	}
	if !runtime.MayAct(m.actor, runtime.ActionApprove, run) {
		return card
	}
	blocked := approveBlocked(m.actor, run, p, m.cfgs)
	card.Notes = append(card.Notes, blocked...)
	card.Approval = &views.ApprovalForm{
		Action: views.RunPath(run.UUID) + "/approval", CSRF: m.h.csrfToken(m.c), Digest: p.Digest,
		IdempotencyKey: newToken(), CanApprove: len(blocked) == 0,
	}
	return card
}

// inputPart completes an input pause's card: why the viewer may not submit (when their role
// could), and the form itself on the run page or, on the inbox (card.Link), the link to it.
func (m *cardMaker) inputPart(view runtime.RunView, card *views.PendingCard) {
	canSubmit := runtime.MayAct(m.actor, runtime.ActionSubmit, view.Run)
	if canSubmit {
		if why := submitBlocked(m.actor, view.Pause); why != "" {
			canSubmit = false
			card.Notes = append(card.Notes, why)
		}
	}
	if card.Link {
		card.FormLink = &views.FormLink{Href: views.RunPath(view.Run.UUID) + "#" + views.InputFormID(view.Run.UUID),
			CanSubmit: canSubmit, NoForm: !m.hasForm(view.Pause.InputSchema)}
		return
	}
	form := m.h.inputFormProps(m.c, view)
	form.ReadOnly = !canSubmit
	card.Form = &form
}

// hasForm reports whether the input schema raw yields a form, compiling each schema text of
// the page once.
func (m *cardMaker) hasForm(raw []byte) bool {
	ok, seen := m.forms[string(raw)]
	if !seen {
		_, ok = m.h.renderableSchema(raw)
		m.forms[string(raw)] = ok
	}
	return ok
}

// approveBlocked says why actor may not approve the paused turn (the four-eyes rule and the
// decider tool gate, see docs/state-machine.md), or nothing when they may.
func approveBlocked(actor runtime.Actor, run runtime.Run, p *runtime.Pause, cfgs configIndex) []string {
	var out []string
	if cfg, ok := cfgs.byUID[run.ConfigurationUID]; ok && cfg.RequireSecondApprover && actor.UserUID > 0 && actor.UserUID == run.BeUser {
		out = append(out, msgFourEyes)
	}
	for _, name := range toolNames(p) {
		info := p.Tools[name]
		if info.Registered && !info.Effect.IsWrite() {
			continue
		}
		if why := toolBlocked(actor, name, info, "approve"); why != "" {
			out = append(out, why)
		}
	}
	return out
}

// submitBlocked says why actor may not submit input to the paused turn (submitter gate: every
// pending call and the input tool), or "" when they may.
func submitBlocked(actor runtime.Actor, p *runtime.Pause) string {
	for _, name := range toolNames(p) {
		if why := toolBlocked(actor, name, p.Tools[name], "submit input to"); why != "" {
			return why
		}
	}
	return ""
}

func toolBlocked(actor runtime.Actor, name string, info runtime.ToolInfo, verb string) string {
	switch {
	case !info.Registered:
		return fmt.Sprintf("Nobody may %s this turn: the tool “%s” is not registered.", verb, name)
	case !info.Offered:
		return fmt.Sprintf("Nobody may %s this turn: the tool “%s” is no longer enabled for this configuration.", verb, name)
	case info.AdminOnly && actor.Role != runtime.RoleAdmin:
		return fmt.Sprintf("Only an admin may %s this turn: the tool “%s” is admin-only.", verb, name)
	}
	return ""
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
// captured for it.
func callViews(p *runtime.Pause, approval bool) []views.PendingCallView {
	out := make([]views.PendingCallView, len(p.PendingCalls))
	for i, call := range p.PendingCalls {
		name := call.Function.Name
		args := prettyJSON(call.Function.Arguments)
		lines := strings.Count(args, "\n") + 1
		v := views.PendingCallView{
			Tool: name, Arguments: args, Lines: lines, Long: lines > longArgumentLines || len(args) > longArgumentBytes,
			Badges: toolBadges(name, p.Tools[name], name == p.InputTool), ArgumentsError: call.ArgumentsError != "",
		}
		if info := p.Tools[name]; approval && (info.NeedsApproval || !info.Registered) {
			v.Preview = previewOf(p.Previews, i, name)
		}
		out[i] = v
	}
	return out
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

func toolBadges(name string, info runtime.ToolInfo, input bool) []views.Badge {
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
	if input {
		out = append(out, views.Badge{Label: "Needs your input", Icon: "✎", Tone: "accent"})
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
