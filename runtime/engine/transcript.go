package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/retention"
)

// Transcript is what actor is shown of what run said (runtime.Transcript), run read through
// this Runtime: its request, model turns, tool calls and decisions in event order, each with
// the content the run kept of it as actor may read it. A run actor may not read is
// RunNotFound; a configuration that no longer exists counts as the defaults (metadata,
// support sees redacted).
func (r *Runtime) Transcript(ctx context.Context, actor runtime.Actor, run runtime.Run) (runtime.Transcript, error) {
	if !runtime.MayAct(actor, runtime.ActionRead, run) {
		return runtime.Transcript{}, newError(runtime.CodeRunNotFound, run.UUID, "no such run")
	}
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return runtime.Transcript{}, storeError(run.UUID, err)
	}
	t := runtime.Transcript{Privacy: cfg.Privacy.OrMetadata()}
	evs, err := r.store.Events(ctx, run.UID, -1)
	if err != nil {
		return runtime.Transcript{}, storeError(run.UUID, err)
	}
	var kept []runtime.StoredContent
	readable := runtime.MayAct(actor, runtime.ActionReadContent, run)
	if readable {
		if kept, err = r.store.EventContents(ctx, run.UID, run.UUID); err != nil {
			return runtime.Transcript{}, storeError(run.UUID, err)
		}
	}
	bySequence := make(map[int]runtime.StoredContent, len(kept))
	for _, c := range kept {
		bySequence[c.Sequence] = c
	}
	kinds := runtime.TranscriptKinds()
	for _, e := range evs {
		c, has := bySequence[e.Sequence]
		if !has && !slices.Contains(kinds, e.Kind) {
			continue
		}
		entry := runtime.TranscriptEntry{Event: e}
		switch {
		case !has:
		case c.SealedWith != "":
			entry.SealedWith = c.SealedWith
		case !runtime.MayReadKept(actor, cfg, c.Kept.Privacy):
			entry.Withheld = runtime.WithheldRole
		default:
			entry.Content, entry.Privacy = &c.Kept.Content, c.Kept.Privacy
		}
		t.Entries = append(t.Entries, entry)
	}
	if len(kept) == 0 {
		t.Withheld = r.transcriptWithheld(run, cfg, readable)
	}
	return t, nil
}

// transcriptWithheld is why a run that shows no content shows none: the reader's scope, its
// privacy mode keeping none, or retention having removed what it kept ("" for a run that
// keeps content and has said nothing yet).
func (r *Runtime) transcriptWithheld(run runtime.Run, cfg runtime.Configuration, readable bool) string {
	switch {
	case !readable:
		return runtime.WithheldScope
	case !cfg.Privacy.Keeps():
		return runtime.WithheldPrivacy
	}
	removed := cfg.Retention.RemovedAt(retention.Transcripts, time.Unix(run.FinishedAt, 0))
	if run.FinishedAt > 0 && !removed.IsZero() && !removed.After(time.Unix(r.unix(), 0)) {
		return runtime.WithheldRetention
	}
	return ""
}
