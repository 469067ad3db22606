package engine

import (
	"context"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// finalOutput is the output of a transcript that ended the run: the last assistant message's
// text, followed, when the transcript ends on tool results (a completed run stopped after a
// tool, by its iterations, budget or context window), by those results in order; the parts
// that are not empty, separated by a blank line.
func finalOutput(msgs []model.Message) string {
	end := len(msgs)
	for end > 0 && msgs[end-1].Role == "tool" {
		end--
	}
	var parts []string
	if end > 0 && msgs[end-1].Role == "assistant" && msgs[end-1].Content != "" {
		parts = append(parts, msgs[end-1].Content)
	}
	for _, m := range msgs[end:] {
		if m.Content != "" {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Answer is what actor is shown of the output of run, which the caller read through this
// Runtime: none while the run is not finished; else the output it keeps, or why it is
// withheld (runtime.Answer). An output sealed with a key the store lacks is SealingKeyMissing,
// never guessed at.
func (r *Runtime) Answer(ctx context.Context, actor runtime.Actor, run runtime.Run) (runtime.Answer, error) {
	if !run.Status.Terminal() {
		return runtime.Answer{}, nil
	}
	if !runtime.MayAct(actor, runtime.ActionReadContent, run) {
		return runtime.Answer{Withheld: runtime.WithheldScope}, nil
	}
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	if err == nil && cfg.NoOutput {
		return runtime.Answer{Withheld: runtime.WithheldPrivacy}, nil
	}
	out, ok, err := r.store.RunOutput(ctx, run.UID, run.UUID)
	switch {
	case err != nil:
		return runtime.Answer{}, storeError(run.UUID, err)
	case !ok:
		return runtime.Answer{}, nil
	case out.Text == "":
		return runtime.Answer{Withheld: runtime.WithheldRetention}, nil
	}
	if id := runtime.UnopenedKey(out.Text); id != "" {
		return runtime.Answer{}, runtime.SealingKeyMissing(run.UUID, id)
	}
	return runtime.Answer{Output: &out}, nil
}
