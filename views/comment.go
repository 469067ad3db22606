package views

import "runsdesk/runtime"

// CommentBox is a run page's comment form while the run waits: where it posts (URL), a fresh
// idempotency key, and after a refused post the text as the person typed it (Text) with the
// reason it was refused (Error). Closed is set when the run no longer waits: the text is kept
// on the page, and nothing can be posted.
type CommentBox struct {
	URL            string
	IdempotencyKey string
	Text           string
	Error          string
	Closed         bool
}

// CommentsPath is where run uuid's comments are posted.
func CommentsPath(uuid string) string { return RunPath(uuid) + "/comments" }

// The comment form's fields and bounds.
const (
	MaxCommentCharacters = runtime.MaxCommentCharacters
	FieldComment         = "comment"
	CommentFieldID       = "comment-text"
	CommentHelpText      = "Everyone who may read this run sees comments on its timeline; the model never does. Write @username to notify that person."
)
