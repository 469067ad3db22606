package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime/apply"
)

// TestSubjectTemplate: a configuration's `subject:` is applied as written and a changed one
// updates the configuration; a template that does not parse is a problem at its path; a
// notify rule's include_subject is applied and compared.
func TestSubjectTemplate(t *testing.T) {
	const hook = `{on: [waiting], webhook: {url: "https://hooks.example/desk", secret_env: DESK_HOOK_SECRET}, include_subject: true}`
	file := withNotify(hook) + `    subject: "Refund {{order_id}} for {{ amount }} EUR"` + "\n"
	cat, a := appliedFile(t, file)
	c := cat.configs[0]
	if c.Subject != "Refund {{order_id}} for {{ amount }} EUR" || !c.Notify[0].IncludeSubject {
		t.Fatalf("applied subject %q, include_subject %v", c.Subject, c.Notify[0].IncludeSubject)
	}
	for _, change := range []struct{ from, to string }{
		{"for {{ amount }}", "for {{amount.value}}"},
		{"include_subject: true", "include_subject: false"},
	} {
		next, err := a.Plan(context.Background(), []byte(strings.Replace(file, change.from, change.to, 1)))
		if err != nil || next.Changes[0].Action != apply.Update {
			t.Errorf("%q → %q: plan %+v, %v; want an update", change.from, change.to, next, err)
		}
	}
	for _, bad := range []struct{ template, want string }{
		{"Refund {{order_id", `configurations[0].subject: "{{" is not closed by "}}"`},
		{"Refund {{}}", `configurations[0].subject: "{{}}" names no argument`},
		{"Refund {{order id}}", "configurations[0].subject: {{order id}}: an argument is named by letters, digits, _ and -, nested by dots"},
		{strings.Repeat("x", 1025), "configurations[0].subject: longer than 1024 characters"},
	} {
		_, err := a.Plan(context.Background(), []byte("configurations:\n"+okConfiguration+"    subject: \""+bad.template+"\"\n"))
		var ps apply.Problems
		if !errors.As(err, &ps) || len(ps) != 1 || !strings.HasPrefix(ps[0].String(), bad.want) {
			t.Errorf("subject %.30q: %v, want one problem %q", bad.template, err, bad.want)
		}
	}
}
