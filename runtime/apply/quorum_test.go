package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime/apply"
)

const quorumFile = `tools:
  - name: pay
    parameters: {type: object, properties: {amount: {type: number}}}
    effect: non_idempotent_write
    http: {url: "http://127.0.0.1:9000/pay"}
    approvals_required: 3
    allow_automatic_vote: true
configurations:
  - identifier: payments
    name: Payments
    provider: {kind: scripted, script: [{content: hi}]}
    tools: [pay]
    approvals_required: 2
`

// TestQuorumKeys: approvals_required and allow_automatic_vote are stored on tools and
// configurations, a change of either is an update naming it, and approvals_required outside
// 1–5 is refused with its path.
func TestQuorumKeys(t *testing.T) {
	ctx := context.Background()
	cat := &fakeCatalog{}
	a := newApplier(cat, fullEnv)
	applyFile(t, a, []byte(quorumFile))
	if q := cat.tools[0].Quorum; q.Required != 3 || !q.AutomaticVote {
		t.Fatalf("tool quorum stored %+v", q)
	}
	if q := cat.configs[0].Quorum; q.Required != 2 || q.AutomaticVote {
		t.Fatalf("configuration quorum stored %+v", q)
	}
	p, err := a.Plan(ctx, []byte(strings.Replace(quorumFile, "approvals_required: 2", "approvals_required: 4", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var updated []string
	for _, c := range p.Changes {
		if c.Action == apply.Update {
			updated = append(updated, c.Fields...)
		}
	}
	if strings.Join(updated, ",") != "approvals_required" {
		t.Errorf("changing approvals_required updates %v", updated)
	}
	for _, c := range []struct{ name, file, want string }{
		{"tool above 5", strings.Replace(quorumFile, "approvals_required: 3", "approvals_required: 6", 1), "tools[0].approvals_required: must be between 1 and 5, got 6"},
		{"configuration 0", strings.Replace(quorumFile, "approvals_required: 2", "approvals_required: 0", 1), "configurations[0].approvals_required: must be between 1 and 5, got 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := newApplier(&fakeCatalog{}, fullEnv).Plan(ctx, []byte(c.file))
			var ps apply.Problems
			if !errors.As(err, &ps) || len(ps) != 1 || !strings.HasPrefix(ps[0].String(), c.want) {
				t.Errorf("got %v, want one problem starting %q", err, c.want)
			}
		})
	}
}
