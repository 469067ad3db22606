package notify

import (
	"encoding/json"
	"strings"
)

// slackMessage is a Slack incoming-webhook message: the text (notifications and clients
// without blocks) and blocks with a button linking to the run.
type slackMessage struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type     string         `json:"type"`
	Text     *slackText     `json:"text,omitempty"`
	Elements []slackElement `json:"elements,omitempty"`
}

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackElement struct {
	Type     string    `json:"type"`
	Text     slackText `json:"text"`
	URL      string    `json:"url"`
	ActionID string    `json:"action_id"`
}

// slackOutputRunes bounds the output a Slack message quotes: a section's text holds at most
// 3,000 characters; the rest is on the run's page.
const slackOutputRunes = 2500

// cutRunes is s cut to at most n runes, "…" marking a cut.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// slackEscape escapes the three characters Slack's mrkdwn reserves.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackBody is the Slack message of m.
func (m message) slackBody() ([]byte, error) {
	n := m.n
	detail := "Run `" + n.RunUUID + "` of " + slackEscape.Replace(n.ConfigurationIdentifier)
	if n.Subject != "" {
		detail += ": " + slackEscape.Replace(n.Subject)
	}
	if n.Tool != "" {
		detail += ", tool `" + slackEscape.Replace(n.Tool) + "`"
	}
	if n.TerminationReason != "" {
		detail += ", termination reason `" + slackEscape.Replace(n.TerminationReason) + "`"
	}
	if m.mayAct != "" {
		detail += "\n" + slackEscape.Replace(m.mayAct)
	}
	if text := m.output(); text != "" {
		detail += "\n```" + slackEscape.Replace(cutRunes(text, slackOutputRunes)) + "```"
	}
	if e := m.outputError(); e != "" {
		detail += "\nOutput: " + slackEscape.Replace(e) + "."
	}
	return json.Marshal(slackMessage{
		Text: slackEscape.Replace(m.summary) + ": <" + m.link + "|open the run>",
		Blocks: []slackBlock{
			{Type: "section", Text: &slackText{Type: "mrkdwn", Text: "*" + slackEscape.Replace(m.summary) + "*\n" + detail}},
			{Type: "actions", Elements: []slackElement{{Type: "button", Text: slackText{Type: "plain_text", Text: "Open the run"},
				URL: m.link, ActionID: "open_run"}}},
		},
	})
}
