package apply_test

import (
	"context"
	"strings"
	"testing"

	"runsdesk/runtime/apply"
	"runsdesk/runtime/quorum"
)

// remoteQuorumFile is server crm needing two approvals for its tools, an automatic one allowed;
// tool r of crm keeps its server's keys and tool s sets its own approvals_required.
func remoteQuorumFile(url string) string {
	return "mcp_servers:\n  - name: crm\n    url: \"" + url + "\"\n    approvals_required: 2\n    allow_automatic_vote: true\n" +
		"tools:\n  - name: r\n    mcp: {server: crm, tool: lookup}\n  - name: s\n    mcp: {server: crm, tool: bare}\n    approvals_required: 3\n"
}

// TestRemoteToolQuorumKeys: an mcp_servers entry's approvals_required and allow_automatic_vote
// are stored on its tools, a tool's own approvals_required wins over its server's, a change of
// the server's keys is an update of the tools that take them, and approvals_required outside
// 1–5, on the server or on an mcp: tool, is refused with its path.
func TestRemoteToolQuorumKeys(t *testing.T) {
	srv := remoteServer(t)
	file := remoteQuorumFile(srv.URL)
	cat, a := appliedFile(t, file)
	if len(cat.tools) != 2 {
		t.Fatalf("stored %d tools", len(cat.tools))
	}
	if r, s := cat.tools[0].Quorum, cat.tools[1].Quorum; r != (quorum.Policy{Required: 2, AutomaticVote: true}) || s != (quorum.Policy{Required: 3, AutomaticVote: true}) {
		t.Fatalf("stored quorum r %+v, s %+v; want the server's 2 with automatic, and s's own 3", r, s)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"server's approvals_required", "approvals_required: 2", "approvals_required: 4", "r: approvals_required"},
		{"server's allow_automatic_vote", "    allow_automatic_vote: true\n", "", "r: allow_automatic_vote; s: allow_automatic_vote"},
		{"tool's own", "approvals_required: 3", "approvals_required: 1", "s: approvals_required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := a.Plan(context.Background(), []byte(strings.Replace(file, c.from, c.to, 1)))
			if err != nil {
				t.Fatal(err)
			}
			var updated []string
			for _, ch := range p.Changes {
				if ch.Action == apply.Update {
					updated = append(updated, ch.Name+": "+strings.Join(ch.Fields, ","))
				}
			}
			if got := strings.Join(updated, "; "); got != c.want {
				t.Errorf("updates %q, want %q", got, c.want)
			}
		})
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"server above 5", "approvals_required: 2", "approvals_required: 6", "mcp_servers[0].approvals_required: must be between 1 and 5, got 6"},
		{"server 0", "approvals_required: 2", "approvals_required: 0", "mcp_servers[0].approvals_required: must be between 1 and 5, got 0"},
		{"mcp: tool above 5", "approvals_required: 3", "approvals_required: 9", "tools[1].approvals_required: must be between 1 and 5, got 9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cat := &fakeCatalog{}
			wantOneProblem(t, cat, newApplier(cat, fullEnv), strings.Replace(file, c.from, c.to, 1), c.want)
		})
	}
}
