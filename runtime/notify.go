package runtime

import (
	"slices"
	"strconv"
)

// NotifyEvent names a moment of a run's wait that a configuration's `notify:` rules can
// subscribe to; the webhook type of its notification is "run." + the event.
type NotifyEvent string

// The notify events (docs/notifications.md).
const (
	NotifyWaiting   NotifyEvent = "waiting"
	NotifyReminder  NotifyEvent = "reminder"
	NotifyEscalated NotifyEvent = "escalated"
	NotifyExpired   NotifyEvent = "expired"
	NotifyDecided   NotifyEvent = "decided"
	// NotifyFinished is a run reaching a terminal status (completed, failed, cancelled).
	NotifyFinished NotifyEvent = "finished"
	// NotifyAssigned is a waiting run assigned to a person; an email rule with ToPeople sends
	// it to that person's address.
	NotifyAssigned NotifyEvent = "assigned"
	// NotifyMentioned is a person mentioned (@username) in a comment on a waiting run; an
	// email rule with ToPeople sends it to each mentioned person's address.
	NotifyMentioned NotifyEvent = "mentioned"
)

// NotifyEvents lists every notify event, in the order of a wait's life.
func NotifyEvents() []NotifyEvent {
	return []NotifyEvent{NotifyWaiting, NotifyReminder, NotifyEscalated, NotifyExpired, NotifyDecided, NotifyFinished, NotifyAssigned, NotifyMentioned}
}

// Valid reports whether e is one of NotifyEvents.
func (e NotifyEvent) Valid() bool {
	switch e {
	case NotifyWaiting, NotifyAssigned, NotifyMentioned, NotifyReminder, NotifyEscalated, NotifyExpired, NotifyDecided, NotifyFinished:
		return true
	}
	return false
}

// The notification channels: the Channel of a NotifyRule and of a Notification.
// ChannelCallback is no configured rule's: it is the POST of an external request's decision
// to the callback_url its caller gave (URL, signed with the secret of SecretEnv).
const (
	ChannelWebhook  = "webhook"
	ChannelEmail    = "email"
	ChannelSlack    = "slack"
	ChannelCallback = "callback"
)

// NotifyRule is one entry of a configuration's `notify:`: the events it is sent for and its
// one channel with that channel's target. Secrets are named by environment variable, never
// held: they are read when a notification is sent.
type NotifyRule struct {
	Events  []NotifyEvent `json:"on"`
	Channel string        `json:"channel"`
	// URL and SecretEnv are a webhook's endpoint and the variable holding its signing secret.
	URL       string `json:"url,omitempty"`
	SecretEnv string `json:"secret_env,omitempty"`
	// To are an email's recipients; ToPeople sends the events that concern a person (a run
	// assigned to them, a comment mentioning them) to that person's address instead.
	To       []string `json:"to,omitempty"`
	ToPeople bool     `json:"to_people,omitempty"`
	// WebhookURLEnv is the variable holding a Slack incoming-webhook URL.
	WebhookURLEnv string `json:"webhook_url_env,omitempty"`
	// IncludeSubject puts the pause's subject (Run.Subject) into the message.
	IncludeSubject bool `json:"include_subject,omitempty"`
	// IncludeOutput puts a finished run's output (RunOutput) into its `finished` message: the
	// one content a notification may carry, and only when its rule asks.
	IncludeOutput bool `json:"include_output,omitempty"`
}

// Env is the environment variable the rule is sent with (a webhook's secret_env, a Slack
// rule's webhook_url_env), "" for an email rule.
func (r NotifyRule) Env() string {
	if r.Channel == ChannelSlack {
		return r.WebhookURLEnv
	}
	return r.SecretEnv
}

// EnvRole is what Env holds, for messages: "the webhook secret", "the Slack webhook URL".
func (r NotifyRule) EnvRole() string {
	switch r.Channel {
	case ChannelSlack:
		return "the Slack webhook URL"
	case ChannelCallback:
		return "the callback secret"
	}
	return "the webhook secret"
}

// CallbackRule is the rule of the outbox row that POSTs an external request's decision to
// callbackURL when it ends, signed with the secret of the variable secretEnv names.
func CallbackRule(callbackURL, secretEnv string) NotifyRule {
	return NotifyRule{Events: []NotifyEvent{NotifyFinished}, Channel: ChannelCallback, URL: callbackURL, SecretEnv: secretEnv}
}

// Personal reports whether e concerns particular people, whom a ToPeople rule mails.
func (e NotifyEvent) Personal() bool { return e == NotifyAssigned || e == NotifyMentioned }

// Subscribes reports whether the rule is sent for e.
func (r NotifyRule) Subscribes(e NotifyEvent) bool {
	return slices.Contains(r.Events, e)
}

// The states of an outbox row (docs/state-machine.md, "Notifications").
const (
	NotificationPending = "pending"
	NotificationSending = "sending"
	NotificationSent    = "sent"
	NotificationFailed  = "failed"
	// NotificationBlocked is a row a dispatcher could not send where it runs (its rule's
	// variable unset there, or no mail server); it stays due for processes that can.
	NotificationBlocked = "blocked"
)

// NotifyReach is what one dispatcher can send where it runs, for its claims: Blocked says why
// a rule cannot be sent there ("" when it can); a due row it blocks is marked blocked, with
// that reason, instead of claimed. Rows already blocked whose rule needs a variable of Unset,
// or (NoMail) is an email, are not even read. Slots, when set, bounds the deliveries in
// flight per destination: a row whose slot it refuses is left as it is, unclaimed, and rows of
// the rules of Skip (the rules of destinations with every slot taken) are not even read.
type NotifyReach struct {
	Blocked func(NotifyRule) string
	Unset   []string
	NoMail  bool
	Slots   NotifySlots
	Skip    []NotifyRule
}

// NotifySlots are a dispatcher's delivery slots, for its claims.
type NotifySlots interface {
	// Take reserves a slot of r's destination for a row about to be claimed; false when
	// the destination has all its deliveries in flight.
	Take(r NotifyRule) bool
	// Give returns the slot of a row that was not claimed after all.
	Give(r NotifyRule)
}

// Refuses is why the dispatcher cannot send r ("" when it can, or without Blocked).
func (n NotifyReach) Refuses(r NotifyRule) string {
	if n.Blocked == nil {
		return ""
	}
	return n.Blocked(r)
}

// Notification is one outbox row: one rule's message about one event of one run, written in
// the transaction of the transition that caused it. Its fields describe the run as the
// transition left it; they never hold arguments or submitted values, but for the Subject a
// rule asks for.
type Notification struct {
	UID     int64
	Run     int64
	RunUUID string
	Event   NotifyEvent
	// Rule is the configuration's rule (its channel and target) as it was at the event.
	Rule                    NotifyRule
	Status                  Status // the run's status once the transition committed
	Kind                    string // "approval" or "input": the pause the event is about
	Tool                    string // the first tool of that pause
	ConfigurationIdentifier string
	ConfigurationName       string
	// AdminOnly and FourEyes say who may act on the pause: admins only (an admin-only
	// tool), and not the run's initiator (a second approver required).
	AdminOnly    bool
	FourEyes     bool
	WaitingSince int64 // unix seconds; 0 when unknown
	ExpiresAt    int64 // unix seconds; 0 when the pause has no deadline
	OccurredAt   int64 // unix seconds of the transition
	State        string
	Attempts     int
	DueAt        int64 // pending: next attempt; sending: when the claim lapses
	LastError    string
	SentAt       int64
	// Subject is the pause's subject, set only when Rule.IncludeSubject: the template of
	// the configuration decides what it reveals.
	Subject string
	// TerminationReason is a `finished` notification's run's termination reason ("" for the
	// other events).
	TerminationReason string
	// Output is a `finished` notification's run's output, read when the row is claimed and
	// set only when Rule.IncludeOutput (nil: none, or not asked for).
	Output *RunOutput
}

// MessageID is the notification's stable id, the same on every delivery attempt (the
// webhook-id header, the email's Message-ID).
func (n Notification) MessageID() string {
	return "msg_" + n.RunUUID + "_" + strconv.FormatInt(n.UID, 10)
}
