package sso

import (
	"fmt"
	"slices"
	"strings"

	"runsdesk/runtime"
)

// rank orders the roles a person may get from groups, highest first.
var rank = []runtime.Role{runtime.RoleAdmin, runtime.RoleReviewer, runtime.RoleSupport}

// RoleMap maps the provider's groups to runsdesk roles: each role has the groups that grant it.
type RoleMap map[runtime.Role][]string

// ParseRoles reads "admin=desk-admins,reviewer=desk-reviewers|finance,support=desk-support":
// a role per comma-separated item, several groups per role with "|". Every role is admin,
// reviewer or support, named at most once, with at least one group; at least one role is given.
func ParseRoles(spec string) (RoleMap, error) {
	m := RoleMap{}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, groups, ok := strings.Cut(item, "=")
		role := runtime.Role(strings.TrimSpace(name))
		if !ok || !slices.Contains(rank, role) {
			return nil, fmt.Errorf("%q is not ROLE=GROUP with role admin, reviewer or support", item)
		}
		if _, dup := m[role]; dup {
			return nil, fmt.Errorf("role %s is named twice", role)
		}
		for g := range strings.SplitSeq(groups, "|") {
			if g = strings.TrimSpace(g); g != "" {
				m[role] = append(m[role], g)
			}
		}
		if len(m[role]) == 0 {
			return nil, fmt.Errorf("role %s has no group", role)
		}
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no role is mapped to a group")
	}
	return m, nil
}

// Role returns the highest role (admin, then reviewer, then support) one of groups grants;
// ok is false when no group is mapped.
func (m RoleMap) Role(groups []string) (role runtime.Role, ok bool) {
	for _, r := range rank {
		for _, g := range m[r] {
			if slices.Contains(groups, g) {
				return r, true
			}
		}
	}
	return "", false
}
