package engine

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"runsdesk/runtime"
)

// maxCommentAttempts bounds how often Comment reads the run again when its pause changed (a
// vote, an assignment) between the read and the write.
const maxCommentAttempts = 3

// Comment stores c, a note by actor on waiting run uuid, and returns it as stored: every person
// who may read the run (support included; no service account or rule) may comment while it
// waits. Each @username it mentions must name an enabled person, who is notified (notify event
// mentioned). It is one record-only commit plan: the pause as read, the comment event
// {by, mentioned}, the comment row (its text sealed, never in the event or the audit row), the
// notifications and the audit row; the run keeps waiting and the model never sees it. A post
// repeating an idempotency key returns the comment first stored under it.
func (r *Runtime) Comment(ctx context.Context, actor runtime.Actor, uuid string, c runtime.NewComment) (runtime.Comment, error) {
	var read runtime.Run
	var first *runtime.Comment
	var plan *runtime.CommitPlan
	_, ev, err := r.commitRecord(ctx, uuid, maxCommentAttempts, func(run runtime.Run) (*runtime.CommitPlan, error) {
		read = run
		if !runtime.MayAct(actor, runtime.ActionRead, run) {
			return nil, newError(runtime.CodeRunNotFound, uuid, "no such run")
		}
		if posted, found, err := r.postedComment(ctx, run, c.IdempotencyKey); err != nil || found {
			first = &posted
			return nil, err
		}
		var e *runtime.Error
		plan, e = r.commentPlan(ctx, actor, run, c)
		return plan, errOrNil(e)
	})
	switch {
	case errors.Is(err, runtime.ErrDuplicateComment):
		posted, _, err := r.postedComment(ctx, read, c.IdempotencyKey)
		return posted, err
	case err != nil:
		return runtime.Comment{}, err
	case first != nil:
		return *first, nil
	}
	stored := *plan.Comment
	stored.Sequence, stored.Crdate = ev.Sequence, ev.Crdate
	return stored, nil
}

// postedComment is the comment stored on run under key, and whether there is one ("" finds
// none).
func (r *Runtime) postedComment(ctx context.Context, run runtime.Run, key string) (runtime.Comment, bool, error) {
	if key == "" {
		return runtime.Comment{}, false, nil
	}
	first, err := r.store.FindComment(ctx, run.UID, run.UUID, key)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return runtime.Comment{}, false, nil
	case err != nil:
		return runtime.Comment{}, false, storeError(run.UUID, err)
	}
	return first, true, nil
}

// commentPlan is the record-only plan storing c by actor on run (as read), or why it may not be
// stored.
func (r *Runtime) commentPlan(ctx context.Context, actor runtime.Actor, run runtime.Run, c runtime.NewComment) (*runtime.CommitPlan, *runtime.Error) {
	if actor.UserUID <= 0 || actor.Role == runtime.RoleRule {
		return nil, newError(runtime.CodeRunAccessDenied, run.UUID, "%s may not comment; only people comment on runs", actorLabel(actor))
	}
	if !run.Status.Waiting() {
		return nil, newError(runtime.CodeInvalidRequest, run.UUID, "comments are taken while a run waits; this one is %s", run.Status)
	}
	body := strings.TrimSpace(c.Body)
	if e := checkCommentBody(run, body); e != nil {
		return nil, e
	}
	if len(c.IdempotencyKey) > runtime.MaxIdempotencyKey {
		return nil, newError(runtime.CodeInvalidRequest, run.UUID, "the idempotency key is longer than %d characters", runtime.MaxIdempotencyKey)
	}
	mentioned, e := r.mentioned(ctx, run, actor, body)
	if e != nil {
		return nil, e
	}
	key := c.IdempotencyKey
	if key == "" {
		key = randomKey()
	}
	now := r.unix()
	uids := make([]int64, len(mentioned))
	for i, p := range mentioned {
		uids[i] = p.UserUID
	}
	plan := &runtime.CommitPlan{
		Read: run, Now: now, Comment: &runtime.Comment{Run: run.UID, Author: actor.UserUID, IdempotencyKey: key, Body: body},
		Event: runtime.NewEvent{Run: run.UID, Kind: runtime.EventComment, Payload: mustJSON(map[string]any{"by": actor.UserUID, "mentioned": uids}), Now: now},
		Audit: &runtime.AuditRecord{Actor: actor, AuditNote: runtime.AuditNote{Action: runtime.EventComment, IP: c.IP, Outcome: runtime.AuditCommented}},
	}
	if told := others(mentioned, actor); len(told) > 0 {
		plan.Notify, plan.NotifyPeople = runtime.NotifyMentioned, addresses(told...)
	}
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	switch {
	case err == nil:
		plan.Configuration = &cfg
	case !errors.Is(err, runtime.ErrNotFound):
		return nil, storeError(run.UUID, err)
	}
	return plan, nil
}

// checkCommentBody refuses a comment body that is empty, not text, or longer than
// runtime.MaxCommentCharacters.
func checkCommentBody(run runtime.Run, body string) *runtime.Error {
	switch {
	case body == "":
		return newError(runtime.CodeInvalidRequest, run.UUID, "write a comment first")
	case !utf8.ValidString(body) || strings.ContainsRune(body, 0):
		return newError(runtime.CodeInvalidRequest, run.UUID, "a comment must be text")
	case utf8.RuneCountInString(body) > runtime.MaxCommentCharacters:
		return newError(runtime.CodeInvalidRequest, run.UUID, "a comment has at most %d characters; this one has %d", runtime.MaxCommentCharacters, utf8.RuneCountInString(body))
	}
	return nil
}

// mentioned are the people body mentions (runtime.Mentions), each an enabled person; a
// mention of nobody, of a disabled account, or more than runtime.MaxMentions mentions, are
// refused so the writer knows who will be told.
func (r *Runtime) mentioned(ctx context.Context, run runtime.Run, actor runtime.Actor, body string) ([]runtime.Actor, *runtime.Error) {
	names := runtime.Mentions(body)
	if len(names) > runtime.MaxMentions {
		return nil, newError(runtime.CodeInvalidRequest, run.UUID, "a comment may mention at most %d people; this one mentions %d", runtime.MaxMentions, len(names))
	}
	out := make([]runtime.Actor, 0, len(names))
	for _, name := range names {
		p, err := r.store.PersonByUsername(ctx, name)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			return nil, newError(runtime.CodeInvalidRequest, run.UUID, "@%s names nobody: no person has that username", name)
		case err != nil:
			return nil, storeError(run.UUID, err)
		case p.Disabled:
			return nil, newError(runtime.CodeInvalidRequest, run.UUID, "@%s is disabled and would not see the comment", name)
		}
		out = append(out, p)
	}
	return out, nil
}

// others are people without actor: nobody is notified of their own mention.
func others(people []runtime.Actor, actor runtime.Actor) []runtime.Actor {
	out := make([]runtime.Actor, 0, len(people))
	for _, p := range people {
		if p.UserUID != actor.UserUID {
			out = append(out, p)
		}
	}
	return out
}
