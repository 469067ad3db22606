package apply_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
)

// withNotify is okConfiguration with the given `notify:` entries (each a flow mapping).
func withNotify(entries ...string) string {
	s := "configurations:\n" + okConfiguration + "    notify:\n"
	for _, e := range entries {
		s += "      - " + e + "\n"
	}
	return s
}

// appliedFile plans and applies file on an empty fake catalog with every variable set,
// failing t on any problem, and returns the catalog and the applier for further plans.
func appliedFile(t *testing.T, file string) (*fakeCatalog, *apply.Applier) {
	t.Helper()
	cat := &fakeCatalog{}
	a := apply.New(apply.Config{Catalog: cat, Getenv: fullEnv})
	p, err := a.Plan(context.Background(), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return cat, a
}

// TestNotifyRules: every problem of a `notify:` entry is reported with its path.
func TestNotifyRules(t *testing.T) {
	const hook = `webhook: {url: "https://hooks.example/desk", secret_env: DESK_HOOK_SECRET}`
	cases := []struct {
		name, file, want string
	}{
		{"no events", withNotify("{" + hook + "}"), "configurations[0].notify[0].on: required: a list of events (waiting, reminder, escalated, expired, decided, finished, assigned, mentioned)"},
		{"unknown event", withNotify("{on: [waiting, approved], " + hook + "}"), `configurations[0].notify[0].on[1]: unknown event "approved" (want one of waiting, reminder, escalated, expired, decided, finished, assigned, mentioned)`},
		{"event twice", withNotify("{on: [waiting, waiting], " + hook + "}"), `configurations[0].notify[0].on[1]: event "waiting" is listed twice`},
		{"no channel", withNotify("{on: [waiting]}"), "configurations[0].notify[0]: needs exactly one channel: webhook, email or slack"},
		{"two channels", withNotify("{on: [waiting], " + hook + ", slack: {webhook_url_env: SLACK_WEBHOOK_URL}}"), "configurations[0].notify[0]: has 2 channels; give exactly one"},
		{"unknown key", withNotify("{on: [waiting], " + hook + ", sms: {}}"), "configurations[0].notify[0].sms: unknown key"},
		{"webhook without url", withNotify("{on: [waiting], webhook: {secret_env: S}}"), "configurations[0].notify[0].webhook.url: required"},
		{"webhook relative url", withNotify(`{on: [waiting], webhook: {url: "/hook", secret_env: S}}`), "configurations[0].notify[0].webhook.url: must be an absolute http or https URL"},
		{"webhook ftp url", withNotify(`{on: [waiting], webhook: {url: "ftp://x/hook", secret_env: S}}`), "configurations[0].notify[0].webhook.url: must be an absolute http or https URL"},
		{"webhook url with credentials", withNotify(`{on: [waiting], webhook: {url: "https://u:p@x/hook", secret_env: S}}`), "configurations[0].notify[0].webhook.url: must not carry credentials"},
		{"webhook without secret", withNotify(`{on: [waiting], webhook: {url: "https://x/hook"}}`), "configurations[0].notify[0].webhook.secret_env: required: the name of an environment variable"},
		{"webhook secret not a name", withNotify(`{on: [waiting], webhook: {url: "https://x/hook", secret_env: "whsec_abc="}}`), "configurations[0].notify[0].webhook.secret_env: must be the name of an environment variable"},
		{"email without recipients", withNotify("{on: [waiting], email: {to: []}}"), "configurations[0].notify[0].email.to: required: a list of addresses"},
		{"email bad address", withNotify(`{on: [waiting], email: {to: ["finance@example.com", "Finance <f@example.com>"]}}`), "configurations[0].notify[0].email.to[1]: not an email address like name@example.com"},
		{"slack without env", withNotify("{on: [waiting], slack: {}}"), "configurations[0].notify[0].slack.webhook_url_env: required"},
		{"slack url instead of env", withNotify(`{on: [waiting], slack: {webhook_url_env: "https://hooks.slack.com/services/x"}}`), "configurations[0].notify[0].slack.webhook_url_env: must be the name of an environment variable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := &fakeCatalog{}
			_, err := apply.New(apply.Config{Catalog: cat, Getenv: fullEnv}).Plan(context.Background(), []byte(c.file))
			var ps apply.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Plan error = %v, want Problems", err)
			}
			if len(ps) != 1 || !strings.HasPrefix(ps[0].String(), c.want) {
				t.Errorf("problems:\n%s\nwant exactly one starting %q", strings.Join(lines(err), "\n"), c.want)
			}
			if strings.Contains(err.Error(), "whsec_abc") || strings.Contains(err.Error(), "hooks.slack.com") {
				t.Errorf("a problem quotes a secret: %v", err)
			}
		})
	}
}

// TestNotifyApplied: valid rules are applied as written (events in order, one channel each,
// secrets by variable name only, which need not be set where apply runs); applying the same
// file again changes nothing, and changing a rule updates the configuration.
func TestNotifyApplied(t *testing.T) {
	file := withNotify(
		`{on: [waiting, reminder, escalated, expired, decided, finished, assigned, mentioned], webhook: {url: "https://hooks.example/desk", secret_env: DESK_HOOK_SECRET}}`,
		`{on: [waiting, escalated], email: {to: ["finance@example.com"]}}`,
		`{on: [waiting], slack: {webhook_url_env: SLACK_WEBHOOK_URL}}`)
	cat, a := appliedFile(t, file)
	want := []runtime.NotifyRule{
		{Events: runtime.NotifyEvents(), Channel: runtime.ChannelWebhook, URL: "https://hooks.example/desk", SecretEnv: "DESK_HOOK_SECRET"},
		{Events: []runtime.NotifyEvent{runtime.NotifyWaiting, runtime.NotifyEscalated}, Channel: runtime.ChannelEmail, To: []string{"finance@example.com"}},
		{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelSlack, WebhookURLEnv: "SLACK_WEBHOOK_URL"},
	}
	if got := cat.configs[0].Notify; !reflect.DeepEqual(got, want) {
		t.Fatalf("applied rules:\ngot  %+v\nwant %+v", got, want)
	}
	again, err := a.Plan(context.Background(), []byte(file))
	if err != nil || again.Changes[0].Action != apply.Unchanged {
		t.Fatalf("second plan: %+v, %v", again, err)
	}
	changed, err := a.Plan(context.Background(), []byte(strings.Replace(file, "[waiting, escalated]", "[escalated]", 1)))
	if err != nil || changed.Changes[0].Action != apply.Update {
		t.Fatalf("plan with a changed rule: %+v, %v", changed, err)
	}
}
