package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"runsdesk/runtime/tool"
)

// tagTicket adds a tag to a support ticket. It declares an idempotent write (so every call
// needs approval; repeating it changes nothing).
type tagTicket struct{ book *book }

type tagArgs struct {
	Ticket string `json:"ticket"`
	Tag    string `json:"tag"`
}

// Name is "tag_ticket".
func (t *tagTicket) Name() string { return "tag_ticket" }

// Description tells the model what the tool does.
func (t *tagTicket) Description() string {
	return "Add a tag to a support ticket (T-5001 and so on). Tagging twice changes nothing."
}

// Parameters asks for the ticket and the tag.
func (t *tagTicket) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","required":["ticket","tag"],"properties":{` +
		`"ticket":{"type":"string"},"tag":{"type":"string","pattern":"^[a-z0-9-]{1,40}$"}}}`)
}

// Effect declares an idempotent write.
func (t *tagTicket) Effect() tool.Effect { return tool.EffectIdempotentWrite }

// Preview names the ticket and the tag.
func (t *tagTicket) Preview(_ context.Context, call tool.Call) ([]string, error) {
	var args tagArgs
	if err := decodeArgs(call, &args); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("Add the tag %q to ticket %s.", args.Tag, args.Ticket)}, nil
}

// Execute adds the tag; a ticket that is not T-<digits> or an empty tag is a tool error.
func (t *tagTicket) Execute(_ context.Context, call tool.Call) (tool.Result, error) {
	var args tagArgs
	if err := decodeArgs(call, &args); err != nil {
		return failed("%v", err), nil
	}
	if !strings.HasPrefix(args.Ticket, "T-") || strings.TrimSpace(args.Tag) == "" {
		return failed("ticket must look like T-5001 and the tag must not be empty"), nil
	}
	if !t.book.tag(args.Ticket, args.Tag) {
		return text("Ticket %s already has the tag %q; nothing changed.", args.Ticket, args.Tag), nil
	}
	return text("Ticket %s tagged %q.", args.Ticket, args.Tag), nil
}
