package roles

import (
	"reflect"
	"strings"
	"testing"

	"runsdesk/runtime"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec, want string
		groups     map[runtime.Role][]GroupRef
	}{
		{spec: "", want: ""},
		{spec: "  ", want: ""},
		{
			spec: "admin=Site Admins,reviewer=Editors|#7,support=#12",
			want: "admin=Site Admins,reviewer=Editors|#7,support=#12",
			groups: map[runtime.Role][]GroupRef{
				runtime.RoleAdmin:    {{Title: "Site Admins"}},
				runtime.RoleReviewer: {{Title: "Editors"}, {UID: 7}},
				runtime.RoleSupport:  {{UID: 12}},
			},
		},
		{
			spec: " support = Help desk , admin=#1 ",
			want: "admin=#1,support=Help desk",
			groups: map[runtime.Role][]GroupRef{
				runtime.RoleAdmin:   {{UID: 1}},
				runtime.RoleSupport: {{Title: "Help desk"}},
			},
		},
		{
			spec:   "reviewer=a=b | #4294967295",
			want:   "reviewer=a=b|#4294967295",
			groups: map[runtime.Role][]GroupRef{runtime.RoleReviewer: {{Title: "a=b"}, {UID: 4294967295}}},
		},
	} {
		m, err := Parse(tc.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.spec, err)
			continue
		}
		if got := m.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.spec, got, tc.want)
		}
		for _, role := range []runtime.Role{runtime.RoleAdmin, runtime.RoleReviewer, runtime.RoleSupport} {
			if got := m.Groups(role); !reflect.DeepEqual(got, tc.groups[role]) {
				t.Errorf("Parse(%q).Groups(%s) = %v, want %v", tc.spec, role, got, tc.groups[role])
			}
		}
		again, err := Parse(m.String())
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Errorf("Parse(%q) does not round-trip: %v, %v", m.String(), again, err)
		}
	}
}

func TestParseErrorsNameTheBadPart(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"editor=Editors", `unknown role "editor"`},
		{"service=Bots", `unknown role "service"`},
		{"Admin=Admins", `unknown role "Admin"`},
		{"admin", `part 1 ("admin") is not <role>=<group>`},
		{"admin=A,,reviewer=B", `part 2 ("") is not <role>=<group>`},
		{"admin=A,", `part 2 ("") is not <role>=<group>`},
		{"admin=", "role admin: group 1 is empty"},
		{"reviewer=Editors||#3", "role reviewer: group 2 is empty"},
		{"reviewer=Editors| ", "role reviewer: group 2 is empty"},
		{"admin=A,reviewer=B,admin=C", "role admin is mapped twice"},
		{"support=#0", `role support: group "#0": a uid is a positive integer`},
		{"support=#-3", `group "#-3": a uid is a positive integer`},
		{"support=#+3", `group "#+3": a uid is a positive integer`},
		{"support=#07", `group "#07": a uid is a positive integer`},
		{"support=#", `group "#": a uid is a positive integer`},
		{"support=#12a", `group "#12a": a uid is a positive integer`},
		{"support=#4294967296", `group "#4294967296": a uid is a positive integer`},
	} {
		m, err := Parse(tc.spec)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", tc.spec, m)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error %q does not contain %q", tc.spec, err, tc.want)
		}
	}
}

func TestParseAdminsAs(t *testing.T) {
	for value, want := range map[string]runtime.Role{"": runtime.RoleAdmin, "admin": runtime.RoleAdmin, "reviewer": runtime.RoleReviewer} {
		if got, err := ParseAdminsAs(value); err != nil || got != want {
			t.Errorf("ParseAdminsAs(%q) = %q, %v; want %q", value, got, err, want)
		}
	}
	for _, value := range []string{"support", "Reviewer", "none"} {
		if got, err := ParseAdminsAs(value); err == nil {
			t.Errorf("ParseAdminsAs(%q) = %q, want an error", value, got)
		}
	}
}

// siteGroups is a be_groups table: Editors (1) includes News (2), which includes Drafts (3),
// which includes Proofreaders (4), three levels below; 5 and 6 form a cycle; 8 is hidden and
// 9 deleted, each with a live subgroup the mapping names.
func siteGroups() []Group {
	return []Group{
		{UID: 1, Title: "Editors", Subgroups: "2"},
		{UID: 2, Title: "News", Subgroups: "3,99"},
		{UID: 3, Title: "Drafts", Subgroups: " 4 ,"},
		{UID: 4, Title: "Proofreaders"},
		{UID: 5, Title: "Ring A", Subgroups: "6"},
		{UID: 6, Title: "Ring B", Subgroups: "5,7"},
		{UID: 7, Title: "Helpers"},
		{UID: 8, Title: "Old admins", Subgroups: "10", Hidden: true},
		{UID: 9, Title: "Gone", Subgroups: "10", Deleted: true},
		{UID: 10, Title: "Admins"},
		{UID: 11, Title: "Hidden reviewers", Hidden: true},
		{UID: 12, Title: "Deleted reviewers", Deleted: true},
		{UID: 13, Title: "Unmapped"},
	}
}

func TestResolve(t *testing.T) {
	m, err := Parse("admin=Admins|#8,reviewer=#4|Hidden reviewers|#12|Ring A,support=Helpers|News")
	if err != nil {
		t.Fatal(err)
	}
	groups := siteGroups()
	for _, tc := range []struct {
		name       string
		userGroups string
		isAdmin    bool
		adminsAs   runtime.Role
		want       runtime.Role
	}{
		{"a title, directly", "7", false, "", runtime.RoleSupport},
		{"a #uid, directly", "4", false, "", runtime.RoleReviewer},
		{"a #uid three subgroups down", "1", false, "", runtime.RoleReviewer},
		{"a title one subgroup down", "2", false, "", runtime.RoleReviewer},
		{"a cycle, entered at either end", "5", false, "", runtime.RoleReviewer},
		{"a cycle's subgroup", "6", false, "", runtime.RoleReviewer},
		{"the highest of several groups wins", "7,10,4", false, "", runtime.RoleAdmin},
		{"the highest wins whatever the order", "4,7", false, "", runtime.RoleReviewer},
		{"a live group beside a hidden one", "8,7", false, "", runtime.RoleSupport},
		{"a live group reached again", "13,2", false, "", runtime.RoleReviewer},
		{"a TYPO3 admin is an admin", "", true, "", runtime.RoleAdmin},
		{"a TYPO3 admin is an admin by default", "13", true, runtime.RoleAdmin, runtime.RoleAdmin},
		{"a TYPO3 admin as reviewer", "13", true, runtime.RoleReviewer, runtime.RoleReviewer},
		{"a TYPO3 admin as reviewer keeps a higher mapped role", "10", true, runtime.RoleReviewer, runtime.RoleAdmin},
		{"a TYPO3 admin as reviewer over a lower mapped role", "7", true, runtime.RoleReviewer, runtime.RoleReviewer},
		{"not a TYPO3 admin: adminsAs does nothing", "7", false, runtime.RoleReviewer, runtime.RoleSupport},
	} {
		got, ok := Resolve(m, groups, tc.userGroups, tc.isAdmin, tc.adminsAs)
		if !ok || got != tc.want {
			t.Errorf("%s: Resolve(%q, admin=%v) = %q, %v; want %q, true", tc.name, tc.userGroups, tc.isAdmin, got, ok, tc.want)
		}
	}
}

func TestResolveNoRole(t *testing.T) {
	m, err := Parse("admin=Admins|#8,reviewer=#11|Deleted reviewers,support=Helpers")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, userGroups string }{
		{"no groups", ""},
		{"only an unmapped group", "13"},
		{"only unknown uids", "99,0,-1,x"},
		{"a hidden group, though mapped by #uid and its subgroup by title", "8"},
		{"a deleted group whose subgroup is mapped", "9"},
		{"a hidden group mapped by #uid", "11"},
		{"a deleted group mapped by title", "12"},
	} {
		if got, ok := Resolve(m, siteGroups(), tc.userGroups, false, runtime.RoleAdmin); ok || got != "" {
			t.Errorf("%s: Resolve(%q) = %q, %v; want no role", tc.name, tc.userGroups, got, ok)
		}
	}
	if got, ok := Resolve(Mapping{}, siteGroups(), "1,10", false, ""); ok {
		t.Errorf("Resolve with the empty mapping = %q, true; want no role", got)
	}
	if got, ok := Resolve(Mapping{}, nil, "", true, ""); !ok || got != runtime.RoleAdmin {
		t.Errorf("Resolve of a TYPO3 admin with the empty mapping = %q, %v; want admin", got, ok)
	}
}

func FuzzParse(f *testing.F) {
	for _, spec := range []string{
		"", "admin=Site Admins,reviewer=Editors|#7,support=#12", "reviewer=a=b|#4294967295",
		"admin=A,admin=B", "support=#0", "x=y", "admin=|", " , ", "reviewer=#",
	} {
		f.Add(spec)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		m, err := Parse(spec)
		if err != nil {
			return
		}
		again, err := Parse(m.String())
		if err != nil {
			t.Fatalf("Parse(%q) parsed, its String %q does not: %v", spec, m.String(), err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("Parse(%q) = %v; Parse of its String %q = %v", spec, m, m.String(), again)
		}
		if again.String() != m.String() {
			t.Fatalf("String is not stable: %q, then %q", m.String(), again.String())
		}
	})
}
