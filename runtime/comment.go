package runtime

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Comment is a note a person wrote on a run while it waited: shown on the run's timeline, with
// its author and time, to everyone who may read the run, and never sent to the model. Sequence
// is the sequence of the `comment` event written with it. SealedWith names the key a body is
// sealed with when the desk's key set lacks it (Body is then empty).
type Comment struct {
	UID            int64
	Run            int64
	Sequence       int
	Author         int64
	IdempotencyKey string
	Body           string
	Crdate         int64
	SealedWith     string
}

// NewComment is a comment as its author posts it: Body (at most MaxCommentCharacters; each
// @username in it notifies that person), the IdempotencyKey a repeated post carries, and the
// caller's IP for the audit row.
type NewComment struct {
	Body           string
	IdempotencyKey string
	IP             string
}

// MaxCommentCharacters bounds a comment's length, in characters.
const MaxCommentCharacters = 2000

// MaxMentions bounds how many people one comment may mention.
const MaxMentions = 10

// EventComment records a comment on a waiting run: {by, mentioned: [uids]}; the text is kept
// in the comment's own row (Comment), never in the event.
const EventComment = "comment"

// AuditCommented is the audit outcome of a comment (action EventComment); the audit row never
// holds the text.
const AuditCommented = "commented"

// Mentions returns the usernames body mentions, each once, in order of first mention: an "@"
// at the start or after a character that cannot be part of a username, followed by the
// username's characters (letters, digits and . _ - @), less trailing dots, dashes and @ (the
// end of a sentence). So "ask @Ada." mentions "ada", "ada@example.com" mentions nobody.
// Usernames are returned lower-cased, as they are stored.
func Mentions(body string) []string {
	var out []string
	prev := ' '
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRuneInString(body[i:])
		if r != '@' || mentionPart(prev) {
			prev, i = r, i+size
			continue
		}
		end := i + 1
		for end < len(body) && body[end] < utf8.RuneSelf && mentionPart(rune(body[end])) {
			end++
		}
		name := strings.ToLower(strings.TrimRight(body[i+1:end], ".-@"))
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
		prev, i = rune(body[end-1]), end
	}
	return out
}

// mentionPart reports whether r may be part of a mentioned username.
func mentionPart(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@", r)
}
