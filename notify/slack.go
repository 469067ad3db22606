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
	if m.mayAct != "" {
		detail += "\n" + slackEscape.Replace(m.mayAct)
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
