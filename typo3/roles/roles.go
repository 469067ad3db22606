// Package roles maps TYPO3 backend groups to runsdesk roles: the value of `--typo3-roles`
// (Parse) and, for one person, the role their groups and subgroups give them (Resolve). It
// reads nothing itself; callers pass the be_groups rows and the be_users fields.
package roles

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"runsdesk/runtime"
)

// GroupRef names a TYPO3 backend group in a mapping: by its uid (`#<uid>`) when UID is
// non-zero, otherwise by its title, matched exactly.
type GroupRef struct {
	UID   int64
	Title string
}

// String is the reference as `--typo3-roles` writes it: `#<uid>` or the title.
func (g GroupRef) String() string {
	if g.UID != 0 {
		return "#" + strconv.FormatInt(g.UID, 10)
	}
	return g.Title
}

// Mapping is a parsed `--typo3-roles`: for each of admin, reviewer and support, the groups
// whose members (directly or through subgroups) have that role. The zero value maps nothing.
type Mapping struct {
	byRole map[runtime.Role][]GroupRef
}

// Groups returns the groups mapped to role, in the order the flag names them.
func (m Mapping) Groups(role runtime.Role) []GroupRef {
	return append([]GroupRef(nil), m.byRole[role]...)
}

// String is the mapping as Parse reads it, roles from the highest down:
// `admin=<group>,reviewer=<group>|<group>,support=<group>`; "" for an empty mapping.
func (m Mapping) String() string {
	var parts []string
	for _, role := range rolesByRank() {
		refs := m.byRole[role]
		if len(refs) == 0 {
			continue
		}
		names := make([]string, len(refs))
		for i, ref := range refs {
			names[i] = ref.String()
		}
		parts = append(parts, string(role)+"="+strings.Join(names, "|"))
	}
	return strings.Join(parts, ",")
}

// rolesByRank lists the roles a mapping may give, the highest first.
func rolesByRank() []runtime.Role {
	return []runtime.Role{runtime.RoleAdmin, runtime.RoleReviewer, runtime.RoleSupport}
}

// rank orders the mappable roles: higher is more; 0 for any other role.
func rank(role runtime.Role) int {
	for i, r := range rolesByRank() {
		if r == role {
			return len(rolesByRank()) - i
		}
	}
	return 0
}

// Parse reads the value of `--typo3-roles`: comma-separated `<role>=<group>|<group>…` with
// role admin, reviewer or support, each at most once, and each group a title or `#<uid>`.
// Spaces around parts are ignored; "" is the empty mapping. Errors name the bad part.
func Parse(spec string) (Mapping, error) {
	m := Mapping{byRole: map[runtime.Role][]GroupRef{}}
	if strings.TrimSpace(spec) == "" {
		return m, nil
	}
	for i, part := range strings.Split(spec, ",") {
		name, groups, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return Mapping{}, fmt.Errorf("typo3 roles: part %d (%q) is not <role>=<group>", i+1, strings.TrimSpace(part))
		}
		role := runtime.Role(name)
		if rank(role) == 0 {
			return Mapping{}, fmt.Errorf("typo3 roles: unknown role %q (want admin, reviewer or support)", name)
		}
		if _, dup := m.byRole[role]; dup {
			return Mapping{}, fmt.Errorf("typo3 roles: role %s is mapped twice", role)
		}
		refs, err := parseGroups(groups)
		if err != nil {
			return Mapping{}, fmt.Errorf("typo3 roles: role %s: %w", role, err)
		}
		m.byRole[role] = refs
	}
	return m, nil
}

// parseGroups reads `<group>|<group>…` of one role.
func parseGroups(spec string) ([]GroupRef, error) {
	var refs []GroupRef
	for i, group := range strings.Split(spec, "|") {
		group = strings.TrimSpace(group)
		if group == "" {
			return nil, fmt.Errorf("group %d is empty", i+1)
		}
		ref, err := parseGroup(group)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// parseGroup reads one group: `#<uid>` with a positive decimal uid, or a title.
func parseGroup(group string) (GroupRef, error) {
	digits, isUID := strings.CutPrefix(group, "#")
	if !isUID {
		return GroupRef{Title: group}, nil
	}
	uid, err := strconv.ParseUint(digits, 10, 32)
	if err != nil || uid == 0 || digits[0] == '0' {
		return GroupRef{}, fmt.Errorf("group %q: a uid is a positive integer without leading zeros", group)
	}
	return GroupRef{UID: int64(uid)}, nil
}

// ParseAdminsAs reads the value of `--typo3-admins-as`: "admin" (also for "") or "reviewer",
// the role a TYPO3 admin (be_users.admin = 1) has in runsdesk at the least.
func ParseAdminsAs(value string) (runtime.Role, error) {
	switch runtime.Role(value) {
	case "", runtime.RoleAdmin:
		return runtime.RoleAdmin, nil
	case runtime.RoleReviewer:
		return runtime.RoleReviewer, nil
	}
	return "", errors.New("typo3 admins as: want admin or reviewer")
}

// Group is one be_groups row as TYPO3 12 stores it: Subgroups is the `subgroup` column, a
// comma-separated list of uids. Hidden or deleted groups give no role and lead to no subgroup.
type Group struct {
	UID       int64
	Title     string
	Subgroups string
	Hidden    bool
	Deleted   bool
}

// Resolve returns the role of a person whose be_users.usergroup is userGroups (a comma list
// of uids) and whose be_users.admin is isAdmin: the highest role m maps to any of their
// groups or their subgroups, transitively; a TYPO3 admin has at least adminsAs (admin unless
// it is reviewer). Unknown uids are ignored and cycles are safe. False when there is no role:
// such a person cannot sign in.
func Resolve(m Mapping, groups []Group, userGroups string, isAdmin bool, adminsAs runtime.Role) (runtime.Role, bool) {
	reached := memberOf(groups, userGroups)
	var best runtime.Role
	if isAdmin {
		best = runtime.RoleAdmin
		if adminsAs == runtime.RoleReviewer {
			best = runtime.RoleReviewer
		}
	}
	for _, role := range rolesByRank() {
		if rank(role) <= rank(best) {
			break
		}
		if matchesAny(m.byRole[role], reached) {
			best = role
			break
		}
	}
	return best, best != ""
}

// memberOf returns the live groups a person belongs to through userGroups, directly or
// through subgroups, by uid.
func memberOf(groups []Group, userGroups string) map[int64]Group {
	live := map[int64]Group{}
	for _, g := range groups {
		if !g.Hidden && !g.Deleted {
			live[g.UID] = g
		}
	}
	reached := map[int64]Group{}
	queue := uidList(userGroups)
	for len(queue) > 0 {
		uid := queue[0]
		queue = queue[1:]
		g, ok := live[uid]
		if _, seen := reached[uid]; seen || !ok {
			continue
		}
		reached[uid] = g
		queue = append(queue, uidList(g.Subgroups)...)
	}
	return reached
}

// matchesAny reports whether any of refs names a group in reached.
func matchesAny(refs []GroupRef, reached map[int64]Group) bool {
	for _, ref := range refs {
		if ref.UID != 0 {
			if _, ok := reached[ref.UID]; ok {
				return true
			}
			continue
		}
		for _, g := range reached {
			if g.Title == ref.Title {
				return true
			}
		}
	}
	return false
}

// uidList reads a comma list of uids as TYPO3 stores them; entries that are not positive
// integers are skipped.
func uidList(list string) []int64 {
	var uids []int64
	for _, field := range strings.Split(list, ",") {
		uid, err := strconv.ParseInt(strings.TrimSpace(field), 10, 64)
		if err == nil && uid > 0 {
			uids = append(uids, uid)
		}
	}
	return uids
}
