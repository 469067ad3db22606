package notify

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"runsdesk/runtime"
)

// payload is the JSON body of a webhook: the Standard Webhooks envelope around what the
// notification says about its run. It never holds arguments or submitted values, only the
// pause's subject and a finished run's output when the rule includes them.
type payload struct {
	Type      string      `json:"type"`
	Timestamp string      `json:"timestamp"`
	Data      payloadData `json:"data"`
}

type payloadData struct {
	Run           string  `json:"run"`
	Status        string  `json:"status"`
	Configuration string  `json:"configuration"`
	Tool          string  `json:"tool"`
	Kind          string  `json:"kind"`
	WaitingSince  *string `json:"waiting_since"`
	ExpiresAt     *string `json:"expires_at"`
	URL           string  `json:"url"`
	// Subject is the pause's subject, present only for a rule with include_subject.
	Subject string `json:"subject,omitempty"`
	// TerminationReason is a finished run's (run.finished only).
	TerminationReason string `json:"termination_reason,omitempty"`
	// Output is a finished run's output, present only for a rule with include_output and
	// a run that keeps one; OutputError says why a kept output could not be read.
	Output      *payloadOutput `json:"output,omitempty"`
	OutputError string         `json:"output_error,omitempty"`
}

// payloadOutput is a finished run's output: its text and when the run finished.
type payloadOutput struct {
	Text     string `json:"text"`
	Finished string `json:"finished"`
}

// message is one notification rendered for people and machines.
type message struct {
	n       runtime.Notification
	link    string
	summary string
	mayAct  string
}

// render builds the message of n, its links under publicURL ("" leaves them relative).
func render(n runtime.Notification, publicURL string) message {
	return message{n: n, link: RunLink(publicURL, n.RunUUID), summary: summary(n), mayAct: mayAct(n)}
}

// RunLink is the deep link to a run's page: publicURL + "/runs/" + uuid.
func RunLink(publicURL, uuid string) string {
	return strings.TrimRight(publicURL, "/") + "/runs/" + url.PathEscape(uuid)
}

// body is the webhook's JSON body; the same notification always gives the same bytes.
func (m message) body() ([]byte, error) {
	n := m.n
	return json.Marshal(payload{
		Type:      "run." + string(n.Event),
		Timestamp: stamp(n.OccurredAt),
		Data: payloadData{
			Run: n.RunUUID, Status: string(n.Status), Configuration: n.ConfigurationIdentifier,
			Tool: n.Tool, Kind: n.Kind, WaitingSince: optionalStamp(n.WaitingSince),
			ExpiresAt: optionalStamp(n.ExpiresAt), URL: m.link, Subject: n.Subject,
			TerminationReason: n.TerminationReason, Output: m.payloadOutput(), OutputError: m.outputError(),
		},
	})
}

// output is the text of the finished run's output the message carries, "" for none.
func (m message) output() string {
	if o := m.n.Output; o != nil && runtime.UnopenedKey(o.Text) == "" {
		return o.Text
	}
	return ""
}

// outputError says why the output the rule asked for could not be read: it is sealed with a
// key missing from the desk's key set ("" when it could, or none was asked for).
func (m message) outputError() string {
	if o := m.n.Output; o != nil {
		if id := runtime.UnopenedKey(o.Text); id != "" {
			return fmt.Sprintf("the output is sealed with key %q, which is missing from the key set", id)
		}
	}
	return ""
}

func (m message) payloadOutput() *payloadOutput {
	if m.n.Output == nil || m.outputError() != "" {
		return nil
	}
	return &payloadOutput{Text: m.n.Output.Text, Finished: stamp(m.n.Output.Finished)}
}

func stamp(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

func optionalStamp(unix int64) *string {
	if unix <= 0 {
		return nil
	}
	s := stamp(unix)
	return &s
}

// subject is the email subject: "[runsdesk] " and the summary.
func (m message) subject() string { return "[runsdesk] " + m.summary }

// summary is one line saying what happened, naming the configuration by its name.
func summary(n runtime.Notification) string {
	name := n.ConfigurationName
	if name == "" {
		name = n.ConfigurationIdentifier
	}
	what := "input"
	if n.Kind == "approval" {
		what = "approval"
	}
	switch n.Event {
	case runtime.NotifyFinished:
		return name + ": the run " + finishedWord(n.Status)
	case runtime.NotifyReminder:
		return "Reminder: " + name + " still waits for your " + what
	case runtime.NotifyEscalated:
		return "Escalated: " + name + " waits for your " + what
	case runtime.NotifyExpired:
		return name + ": the wait for " + what + " expired"
	case runtime.NotifyDecided:
		return name + ": the " + what + " was decided"
	case runtime.NotifyAssigned:
		return name + ": a run waiting for " + what + " was assigned to you"
	case runtime.NotifyMentioned:
		return name + ": you were mentioned in a comment on a run waiting for " + what
	}
	return name + " waits for your " + what
}

// finishedWord is how a finished run ended, for its summary.
func finishedWord(s runtime.Status) string {
	switch s {
	case runtime.StatusCompleted:
		return "completed"
	case runtime.StatusCancelled:
		return "was cancelled"
	}
	return "failed"
}

// mayAct says who may act on the pause, "" when the event leaves nothing to act on.
func mayAct(n runtime.Notification) string {
	switch n.Event {
	case runtime.NotifyExpired, runtime.NotifyDecided, runtime.NotifyFinished:
		return ""
	}
	s := "Admins and reviewers may act on it"
	if n.AdminOnly {
		s = "Admins may act on it (the tool is admin-only)"
	}
	if n.FourEyes {
		s += ", except the person who started the run (a second approver is required)"
	}
	return s + "."
}

// lines are the plain-text lines of the message, shared by the email's text part.
func (m message) lines() []string {
	n := m.n
	out := []string{m.summary + ".", ""}
	out = append(out, "Run: "+n.RunUUID, "Configuration: "+n.ConfigurationIdentifier)
	if n.Subject != "" {
		out = append(out, "Subject: "+n.Subject)
	}
	if n.Tool != "" {
		out = append(out, "Tool: "+n.Tool)
	}
	out = append(out, "Status: "+string(n.Status))
	if n.TerminationReason != "" {
		out = append(out, "Termination reason: "+n.TerminationReason)
	}
	if n.WaitingSince > 0 {
		out = append(out, "Waiting since: "+stamp(n.WaitingSince))
	}
	if n.ExpiresAt > 0 {
		out = append(out, "Expires at: "+stamp(n.ExpiresAt))
	}
	if m.mayAct != "" {
		out = append(out, "", m.mayAct)
	}
	if text := m.output(); text != "" {
		out = append(out, "", "Output:")
		out = append(out, strings.Split(text, "\n")...)
	}
	if e := m.outputError(); e != "" {
		out = append(out, "", "Output: "+e+".")
	}
	return append(out, "", "Open the run: "+m.link)
}
