package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/views"
)

// The decision policies a bulk group names.
const (
	policyOneApprover = "one approver"
	policyFourEyes    = "four-eyes (a second person must approve)"
)

// Refusals of a bulk selection; nothing is decided.
var (
	errBulkEmpty = publicError(http.StatusBadRequest, "batch_empty", "Select at least one run to decide. Nothing was decided.")
	errBulkMixed = publicError(http.StatusBadRequest, "batch_mixed",
		"These runs cannot be decided together: select runs waiting on the same tools under the same policy. Nothing was decided.")
	errBulkEdits = publicError(http.StatusUnprocessableEntity, "batch_edits",
		"A batch cannot edit arguments: edit and approve each run on its own page. Nothing was decided.")
	errBulkUnreadable = publicError(http.StatusBadRequest, "invalid_request", refusal.FormUnreadable)
)

func errBulkTooLarge(n int) error {
	return publicError(http.StatusBadRequest, "batch_too_large",
		fmt.Sprintf("At most %d runs can be decided together; %d were selected. Nothing was decided.", views.MaxBulkItems, n))
}

// bulkGroup is what approvals decided together share: the tools of the pending turn (sorted)
// and the configuration's decision policy (four-eyes or not).
type bulkGroup struct{ tools, policy string }

// bulkGroupOf is view's bulk group; ok is false for a run that cannot join a batch (not
// waiting for approval, unreadable, or without a digest: the viewer may not decide it).
func bulkGroupOf(view runtime.RunView, cfgs configIndex) (g bulkGroup, ok bool) {
	if view.Run.Status != runtime.StatusWaitingApproval || unreadable(view) || view.Pause.Digest == "" {
		return g, false
	}
	names := toolNames(view.Pause)
	slices.Sort(names)
	g = bulkGroup{tools: strings.Join(names, ", "), policy: policyOneApprover}
	if cfg, found := cfgs.byUID[view.Run.ConfigurationUID]; found && cfg.RequireSecondApprover {
		g.policy = policyFourEyes
	}
	return g, true
}

// bulkGroups puts each row of page (rows[i] describes page[i]) that may join a batch into its
// group, and returns the groups in the order of their first row.
func bulkGroups(page []runtime.RunView, rows []views.InboxRow, cfgs configIndex) []views.BulkGroup {
	var out []views.BulkGroup
	index := map[bulkGroup]int{}
	for i, v := range page {
		g, ok := bulkGroupOf(v, cfgs)
		if !ok {
			continue
		}
		n, seen := index[g]
		if !seen {
			n = len(out)
			index[g] = n
			out = append(out, views.BulkGroup{ID: fmt.Sprintf("bulk-%d", n+1), Tools: g.tools, Policy: g.policy})
		}
		out[n].Count++
		rows[i].Group = out[n].ID
	}
	return out
}

// runsBulkConfirm is GET /runs/bulk?run=…: the confirmation page of a batch of at most
// views.MaxBulkItems runs. Every selected run still waiting for approval is listed compactly
// (subject, each call's tool and arguments on one line, and why the viewer may deny but not
// approve it, if so) with the digest of the turn shown, which the form carries; the others are listed as left out, each
// with why (waiting for input, already handled, …). A selection whose runs do not share one
// bulk group, an empty one and a larger one are refused (400). Nothing is decided here.
func (h *Handlers) runsBulkConfirm(c echo.Context) error {
	selected, err := bulkSelection(c.QueryParams()[views.FieldBulkRun])
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cfgs, err := h.configurations(ctx)
	if err != nil {
		return err
	}
	batch, err := h.readBulkBatch(c, cfgs, selected)
	if err != nil {
		return err
	}
	b := views.BulkConfirm{IdempotencyKey: newToken(), Tools: batch.group.tools, Policy: batch.group.policy}
	for i, view := range batch.views {
		if !batch.joins[i] {
			b.Skipped = append(b.Skipped, views.BulkSkipped{RunUUID: view.Run.UUID, Outcome: string(leftOutOutcome(view))})
			continue
		}
		item := views.BulkItem{RunUUID: view.Run.UUID, Subject: view.Run.Subject, Digest: view.Pause.Digest, PinDigest: view.Pause.PinDigest}
		for _, call := range view.Pause.PendingCalls {
			item.Calls = append(item.Calls, views.BulkCall{Tool: call.Function.Name, Arguments: oneLineJSON(call.Function.Arguments)})
		}
		if label, ok := approvalRefused(view); ok {
			item.DenyOnly = string(label)
		}
		b.Items = append(b.Items, item)
	}
	return h.render(c, http.StatusOK, views.BulkConfirmPage(h.page(c, "Decide together", views.NavInbox), b))
}

// runsBulkDecide is POST /runs/bulk: Approve all or Deny all (one optional reason) on the
// items the confirmation page carried, each decided on its own by the one decision pipeline
// (decideApproval: its own digest, event, audit row and metrics), and answers 200 with the
// outcome of each: approved or denied, a vote recorded (with the approvals still missing), or
// the refusal table's label for its refusal (stale,
// already handled, waiting for input, not permitted, not decided). The batch key makes a
// repeated POST replay each item's first outcome. Every item is checked by the runtime as a
// single decision is, so a crafted batch gains nothing over single decisions; at most
// views.MaxBulkItems. As the page does, it refuses (nothing decided) edits (a batch never
// edits: 422) and items still on the turn shown that no longer share one bulk group (400).
// Approve does not attempt an item whose approval the engine's decision gate refuses the
// viewer (four-eyes, an admin-only tool; approvalRefused): its outcome names that reason.
func (h *Handlers) runsBulkDecide(c echo.Context) error {
	f, err := parseApprovalForm(c)
	if err != nil {
		return err
	}
	if c.FormValue(views.FieldEdits) != "" || c.FormValue(views.FieldPatchDigest) != "" {
		return errBulkEdits
	}
	items, err := bulkItems(c.Request().PostForm[views.FieldBulkItem])
	if err != nil {
		return err
	}
	cfgs, err := h.configurations(c.Request().Context())
	if err != nil {
		return err
	}
	batch, err := h.readBulkBatch(c, cfgs, items)
	if err != nil {
		return err
	}
	f.batch = true
	result := views.BulkResult{Approved: f.approved, Rows: make([]views.BulkOutcomeRow, len(items))}
	for i, it := range items {
		if _, refused := approvalRefused(batch.views[i]); refused && f.approved && batch.joins[i] {
			result.Rows[i] = h.bulkOutcome(c, batch.views[i], runtime.Outcome{}, batch.views[i].Pause.Gate.Refusal())
			continue
		}
		f.digest, f.pin = it.digest, it.pin
		out, err := h.decideApproval(c, it.uuid, f)
		result.Rows[i] = h.bulkOutcome(c, batch.views[i], out, err)
	}
	return h.render(c, http.StatusOK, views.BulkResultPage(h.page(c, "Batch decided", views.NavInbox), result))
}

// bulkBatch is a selection of runs as the viewer sees them now: each run's view, whether it
// joins the batch, and the one bulk group of those that do.
type bulkBatch struct {
	views []runtime.RunView
	joins []bool
	group bulkGroup
}

// readBulkBatch reads the runs of items and checks the batch they form: a run joins it when it
// may join a batch (bulkGroupOf) and, for an item with a digest, is still on the turn shown
// (an item whose turn changed is left to the runtime, which finds it stale or replays it).
// Joining runs of different bulk groups are errBulkMixed; a run the viewer may not read is
// refused as the page refuses it.
func (h *Handlers) readBulkBatch(c echo.Context, cfgs configIndex, items []bulkItem) (bulkBatch, error) {
	b := bulkBatch{views: make([]runtime.RunView, len(items)), joins: make([]bool, len(items))}
	for i, it := range items {
		view, err := h.rt.Get(c.Request().Context(), h.actor(c), it.uuid)
		if err != nil {
			return b, err
		}
		b.views[i] = view
		g, ok := bulkGroupOf(view, cfgs)
		if !ok || it.digest != "" && !schema.DigestEqual(it.digest, view.Pause.Digest) {
			continue
		}
		if slices.Contains(b.joins, true) && g != b.group {
			return b, errBulkMixed
		}
		b.group, b.joins[i] = g, true
	}
	return b, nil
}

// leftOutOutcome is why view cannot join a batch: its run waits for input, or the viewer may
// not decide it, or it cannot be read, or it no longer waits (already handled).
func leftOutOutcome(view runtime.RunView) refusal.Outcome {
	switch {
	case view.Run.Status == runtime.StatusWaitingInput:
		return refusal.OutcomeWaitingInput
	case view.Run.Status != runtime.StatusWaitingApproval:
		return refusal.OutcomeHandled
	case view.Pause.Digest == "" && !unreadable(view):
		return refusal.OutcomeNotPermitted
	}
	return refusal.OutcomeNotDecided
}

// approvalRefused reports whether the viewer may deny but not approve view's waiting turn (the
// engine's decision gate, as the run card hides Approve), with the refusal's batch label
// ("four-eyes: you started this run", "admin-only tool").
func approvalRefused(view runtime.RunView) (refusal.Outcome, bool) {
	if view.Pause == nil || view.Pause.Gate.Access != nil {
		return "", false
	}
	re := view.Pause.Gate.Refusal()
	if re == nil {
		return "", false
	}
	_, row := refusal.OfError(re)
	return row.BatchOutcomeOf(re), true
}

// oneLineJSON is a call's arguments as one line of JSON, < > & shown as themselves; anything
// that is not JSON is returned as is.
func oneLineJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return unescapeHTMLEscapes(b.String())
}

// bulkOutcome is the outcome row of one decided item (read as view before its decision): its
// verdict, or for an approval counted as one vote of a turn that needs more, the votes counted
// and still missing (the run keeps waiting), or its refusal's label from the refusal table (naming the reason of a gate's
// refusal), "waiting for input" for a run that was (an item not decided for another reason is
// logged). An approval the gate refuses is not attempted: its refusal is the gate's.
func (h *Handlers) bulkOutcome(c echo.Context, view runtime.RunView, out runtime.Outcome, err error) views.BulkOutcomeRow {
	uuid, subject := view.Run.UUID, view.Run.Subject
	switch {
	case err == nil && out.Decision.Approved && !out.Resumed:
		return views.BulkOutcomeRow{RunUUID: uuid, Subject: subject, Outcome: string(refusal.OutcomeVoted(out.Votes, out.Required)), Tone: "accent", Voted: true}
	case err == nil && out.Decision.Approved:
		return views.BulkOutcomeRow{RunUUID: uuid, Subject: subject, Outcome: string(refusal.OutcomeApproved), Tone: "success"}
	case err == nil:
		return views.BulkOutcomeRow{RunUUID: uuid, Subject: subject, Outcome: string(refusal.OutcomeDenied), Tone: "success"}
	}
	re, row := refusal.OfError(err)
	label := row.BatchOutcomeOf(re)
	if label == refusal.OutcomeHandled && view.Run.Status == runtime.StatusWaitingInput {
		label = refusal.OutcomeWaitingInput
	}
	if label == refusal.OutcomeNotDecided {
		h.log.WarnContext(c.Request().Context(), "bulk item not decided", "request_id", requestID(c), "run", uuid, "err", err)
	}
	return views.BulkOutcomeRow{RunUUID: uuid, Subject: subject, Outcome: string(label), Tone: "attention"}
}

// bulkItem is one item a bulk decision posts: a run, the digest of the turn shown and the
// digest of the definitions shown.
type bulkItem struct{ uuid, digest, pin string }

// bulkSelection reads the runs selected on the inbox (items without digests: no turn was
// shown yet): run ids, each once, 1 to views.MaxBulkItems of them.
func bulkSelection(values []string) ([]bulkItem, error) {
	return readBulk(values, func(v string) (bulkItem, bool) { return bulkItem{uuid: v}, isRunID(v) })
}

// bulkItems reads the items a confirmation page posts ("<run> <digest> <pin digest>", each
// run once, 1 to views.MaxBulkItems); one that is not of that form is a form that could not
// be read.
func bulkItems(values []string) ([]bulkItem, error) {
	return readBulk(values, func(v string) (bulkItem, bool) {
		uuid, rest, ok := strings.Cut(v, " ")
		digest, pin, _ := strings.Cut(rest, " ")
		return bulkItem{uuid: uuid, digest: digest, pin: pin}, ok && isRunID(uuid) && digest != "" && len(digest) <= 128 && len(pin) <= 128
	})
}

func readBulk(values []string, parse func(string) (bulkItem, bool)) ([]bulkItem, error) {
	switch {
	case len(values) == 0:
		return nil, errBulkEmpty
	case len(values) > views.MaxBulkItems:
		return nil, errBulkTooLarge(len(values))
	}
	out := make([]bulkItem, 0, len(values))
	seen := map[string]bool{}
	for _, v := range values {
		it, ok := parse(v)
		if !ok {
			return nil, errBulkUnreadable
		}
		if !seen[it.uuid] {
			seen[it.uuid] = true
			out = append(out, it)
		}
	}
	return out, nil
}
