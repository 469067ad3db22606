package apply

import (
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"

	"runsdesk/runtime"
)

// NotifySpec is one entry of a configuration's `notify:`: the events it is sent for (`on`)
// and exactly one channel.
type NotifySpec struct {
	On      []string     `yaml:"on,omitempty"`
	Webhook *WebhookSpec `yaml:"webhook,omitempty"`
	Email   *EmailSpec   `yaml:"email,omitempty"`
	Slack   *SlackSpec   `yaml:"slack,omitempty"`
	// IncludeSubject puts the pause's subject (the configuration's `subject:`) into the
	// message; absent or false, messages never carry it.
	IncludeSubject bool `yaml:"include_subject,omitempty"`
	// IncludeOutput puts a finished run's output into its `finished` message: the one
	// content a notification may carry, and only when the rule asks.
	IncludeOutput bool `yaml:"include_output,omitempty"`
}

// WebhookSpec is a Standard Webhooks endpoint and the environment variable holding its
// signing secret (read when a notification is sent, never stored).
type WebhookSpec struct {
	URL       string `yaml:"url,omitempty"`
	SecretEnv string `yaml:"secret_env,omitempty"`
}

// EmailSpec lists an email notification's recipients; ToPeople sends the events that concern
// a person (assigned) to that person's address (`user email`, the OIDC email claim).
type EmailSpec struct {
	To       []string `yaml:"to,omitempty"`
	ToPeople bool     `yaml:"to_people,omitempty"`
}

// SlackSpec names the environment variable holding a Slack incoming-webhook URL.
type SlackSpec struct {
	WebhookURLEnv string `yaml:"webhook_url_env,omitempty"`
}

// Limits of `notify:`.
const (
	maxNotifyRules = 20
	maxRecipients  = 50
	maxAddressLen  = 254
)

// notify checks a configuration's `notify:` list and returns its rules in file order.
func (v *validator) notify(path string, specs []NotifySpec) []runtime.NotifyRule {
	if len(specs) > maxNotifyRules {
		v.c.add(path, "at most %d entries, got %d", maxNotifyRules, len(specs))
	}
	var out []runtime.NotifyRule
	for i, s := range specs {
		out = append(out, v.notifyRule(joinIndex(path, i), s))
	}
	return out
}

// notifyRule checks one entry: known events, each once, and exactly one valid channel.
func (v *validator) notifyRule(path string, s NotifySpec) runtime.NotifyRule {
	r := runtime.NotifyRule{IncludeSubject: s.IncludeSubject, IncludeOutput: s.IncludeOutput}
	if len(s.On) == 0 {
		v.c.add(joinKey(path, "on"), "required: a list of events (%s)", eventNames())
	}
	for j, name := range s.On {
		e := runtime.NotifyEvent(name)
		switch {
		case !e.Valid():
			v.c.add(joinIndex(joinKey(path, "on"), j), "unknown event %q (want one of %s)", truncate(name, 40), eventNames())
		case slices.Contains(r.Events, e):
			v.c.add(joinIndex(joinKey(path, "on"), j), "event %q is listed twice", name)
		default:
			r.Events = append(r.Events, e)
		}
	}
	if s.IncludeOutput && !slices.Contains(s.On, string(runtime.NotifyFinished)) {
		v.c.add(joinKey(path, "include_output"), "applies to the finished event only; add finished to on")
	}
	channels := 0
	if s.Webhook != nil {
		channels++
		r.Channel, r.URL, r.SecretEnv = runtime.ChannelWebhook, s.Webhook.URL, s.Webhook.SecretEnv
		v.webhookTarget(joinKey(path, "webhook"), *s.Webhook)
	}
	if s.Email != nil {
		channels++
		r.Channel, r.To, r.ToPeople = runtime.ChannelEmail, s.Email.To, s.Email.ToPeople
		v.emailTarget(joinKey(path, "email"), *s.Email, r.Events)
	}
	if s.Slack != nil {
		channels++
		r.Channel, r.WebhookURLEnv = runtime.ChannelSlack, s.Slack.WebhookURLEnv
		v.envName(joinKey(joinKey(path, "slack"), "webhook_url_env"), s.Slack.WebhookURLEnv)
	}
	switch {
	case channels == 0:
		v.c.add(path, "needs exactly one channel: webhook, email or slack")
	case channels > 1:
		v.c.add(path, "has %d channels; give exactly one of webhook, email or slack per entry", channels)
	}
	return r
}

func (v *validator) webhookTarget(path string, s WebhookSpec) {
	upath := joinKey(path, "url")
	u, err := url.Parse(s.URL)
	switch {
	case s.URL == "":
		v.c.add(upath, "required")
	case len(s.URL) > maxBaseURLLen:
		v.c.add(upath, "longer than %d bytes", maxBaseURLLen)
	case err != nil:
		v.c.add(upath, "not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		v.c.add(upath, "must be an absolute http or https URL")
	case u.Hostname() == "":
		v.c.add(upath, "has no host")
	case u.User != nil:
		v.c.add(upath, "must not carry credentials; the signature (secret_env) authenticates the desk")
	}
	v.envName(joinKey(path, "secret_env"), s.SecretEnv)
}

func (v *validator) emailTarget(path string, s EmailSpec, events []runtime.NotifyEvent) {
	tpath := joinKey(path, "to")
	impersonal := slices.ContainsFunc(events, func(e runtime.NotifyEvent) bool { return !e.Personal() })
	switch {
	case s.ToPeople && !slices.ContainsFunc(events, runtime.NotifyEvent.Personal):
		v.c.add(joinKey(path, "to_people"), "applies to the assigned and mentioned events only; add one of them to on")
	case len(s.To) == 0 && s.ToPeople && impersonal:
		v.c.add(tpath, "required for the events that concern no one person (all but assigned and mentioned): a list of addresses")
	case len(s.To) == 0 && !s.ToPeople:
		v.c.add(tpath, "required: a list of addresses (or to_people: true for the assigned and mentioned events)")
	case len(s.To) > maxRecipients:
		v.c.add(tpath, "at most %d addresses, got %d", maxRecipients, len(s.To))
	}
	for j, addr := range s.To {
		a, err := mail.ParseAddress(addr)
		if err != nil || a.Address != addr || len(addr) > maxAddressLen {
			v.c.add(joinIndex(tpath, j), "not an email address like name@example.com")
		}
	}
}

// envName checks that name is given and is the name of an environment variable; its value
// is read when a notification is sent, in the sending process.
func (v *validator) envName(path, name string) {
	switch {
	case name == "":
		v.c.add(path, "required: the name of an environment variable")
	case len(name) > maxEnvNameLen || !envNameRule.MatchString(name):
		v.c.add(path, "must be the name of an environment variable (letters, digits and _, not starting with a digit)")
	}
}

// unsetNotifyEnv warns of each notify rule of configs whose variable (secret_env,
// webhook_url_env), and each callback_secret_env, is unset where apply runs: the processes
// that send it need it.
func (a *Applier) unsetNotifyEnv(configs []runtime.Configuration) []string {
	var out []string
	for _, c := range configs {
		for i, r := range c.Notify {
			name := r.Env()
			if name == "" || a.getenv(name) != "" {
				continue
			}
			key := "secret_env"
			if r.Channel == runtime.ChannelSlack {
				key = "webhook_url_env"
			}
			out = append(out, fmt.Sprintf("configuration %s, notify[%d] (%s): %s %s is not set here; the serve and worker processes that send its notifications need it",
				c.Identifier, i, r.Channel, key, name))
		}
		if c.AcceptsCallbacks() && a.getenv(c.External.CallbackSecretEnv) == "" {
			out = append(out, fmt.Sprintf("configuration %s: callback_secret_env %s is not set here; the serve and worker processes that send its callbacks need it",
				c.Identifier, c.External.CallbackSecretEnv))
		}
	}
	return out
}

// eventNames lists the notify events for messages.
func eventNames() string {
	var names []string
	for _, e := range runtime.NotifyEvents() {
		names = append(names, string(e))
	}
	return strings.Join(names, ", ")
}

// notifyEqual reports whether two rule lists would be stored alike.
func notifyEqual(a, b []runtime.NotifyRule) bool {
	return slices.EqualFunc(a, b, func(x, y runtime.NotifyRule) bool {
		return slices.Equal(x.Events, y.Events) && x.Channel == y.Channel && x.URL == y.URL &&
			x.SecretEnv == y.SecretEnv && slices.Equal(x.To, y.To) && x.WebhookURLEnv == y.WebhookURLEnv &&
			x.IncludeSubject == y.IncludeSubject && x.IncludeOutput == y.IncludeOutput && x.ToPeople == y.ToPeople
	})
}
