package sso

import (
	"slices"
	"testing"

	"runsdesk/runtime"
)

func TestParseRolesAndHighestRoleWins(t *testing.T) {
	m, err := ParseRoles("admin=desk-admins, reviewer=desk-reviewers|finance ,support=desk-support")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		groups []string
		want   runtime.Role
	}{
		{[]string{"desk-support", "finance"}, runtime.RoleReviewer},
		{[]string{"desk-support", "finance", "desk-admins"}, runtime.RoleAdmin},
		{[]string{"desk-support"}, runtime.RoleSupport},
		{[]string{"desk-reviewers"}, runtime.RoleReviewer},
	} {
		if got, ok := m.Role(tc.groups); !ok || got != tc.want {
			t.Errorf("Role(%v) = %q, %v; want %q", tc.groups, got, ok, tc.want)
		}
	}
	if got, ok := m.Role([]string{"everyone"}); ok {
		t.Errorf("Role of an unmapped group = %q, want none", got)
	}
	for _, bad := range []string{"", "admin", "owner=x", "admin=", "admin=a,admin=b", "service=bots"} {
		if _, err := ParseRoles(bad); err == nil {
			t.Errorf("ParseRoles(%q) accepted", bad)
		}
	}
}

func TestClaimPath(t *testing.T) {
	claims := map[string]any{"groups": []any{"a", "b"}, "realm_access": map[string]any{"roles": []any{"x"}}, "team": "t"}
	for path, want := range map[string][]string{"groups": {"a", "b"}, "realm_access.roles": {"x"}, "team": {"t"}} {
		if got, ok := claimPath(claims, path); !ok || !slices.Equal(got, want) {
			t.Errorf("claimPath(%q) = %v, %v; want %v", path, got, ok, want)
		}
	}
	for _, path := range []string{"missing", "realm_access.missing", "team.sub"} {
		if got, ok := claimPath(claims, path); ok {
			t.Errorf("claimPath(%q) = %v, want absent", path, got)
		}
	}
}
