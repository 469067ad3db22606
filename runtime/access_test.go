package runtime_test

import (
	"testing"

	"runsdesk/runtime"
)

// The actors of the role matrix.
var (
	admin    = runtime.Actor{UserUID: 1, Name: "ada", Role: runtime.RoleAdmin}
	reviewer = runtime.Actor{UserUID: 3, Name: "rita", Role: runtime.RoleReviewer}
	support  = runtime.Actor{UserUID: 4, Name: "sam", Role: runtime.RoleSupport}
	service  = runtime.Actor{Name: "ci", Role: runtime.RoleService, Scopes: []string{"run", "read", "approve", "cancel"}}
)

// TestMayAct is the role matrix (README.md, "Who may do what"), deny by default.
func TestMayAct(t *testing.T) {
	own := runtime.Run{BeUser: reviewer.UserUID}
	other := runtime.Run{BeUser: 77}
	disabled := admin
	disabled.Disabled = true
	noScopes := runtime.Actor{Role: runtime.RoleService}
	anonymous := runtime.Actor{}
	cases := []struct {
		actor  runtime.Actor
		action runtime.Action
		run    runtime.Run
		want   bool
	}{
		{admin, runtime.ActionRead, other, true},
		{admin, runtime.ActionApprove, other, true},
		{admin, runtime.ActionSubmit, other, true},
		{admin, runtime.ActionCancel, other, true},
		{admin, runtime.ActionStart, other, true},
		{reviewer, runtime.ActionRead, other, true},
		{reviewer, runtime.ActionApprove, other, true},
		{reviewer, runtime.ActionSubmit, other, true},
		{reviewer, runtime.ActionStart, other, true},
		{reviewer, runtime.ActionCancel, own, true},
		{reviewer, runtime.ActionCancel, other, false},
		{support, runtime.ActionRead, other, true},
		{support, runtime.ActionApprove, other, false},
		{support, runtime.ActionSubmit, other, false},
		{support, runtime.ActionCancel, other, false},
		{support, runtime.ActionStart, other, false},
		{service, runtime.ActionRead, other, true},
		{service, runtime.ActionApprove, other, true},
		{service, runtime.ActionSubmit, other, false},
		{service, runtime.ActionCancel, other, true},
		{service, runtime.ActionStart, other, true},
		{noScopes, runtime.ActionRead, other, false},
		{noScopes, runtime.ActionStart, other, false},
		{disabled, runtime.ActionRead, other, false},
		{anonymous, runtime.ActionRead, runtime.Run{}, false},
		{runtime.Actor{Role: runtime.RoleAdmin}, runtime.ActionRead, other, false},
		{admin, runtime.Action("delete"), other, false},
		{admin, runtime.ActionReadContent, other, true},
		{reviewer, runtime.ActionReadContent, other, true},
		{support, runtime.ActionReadContent, other, true},
		{service, runtime.ActionReadContent, other, false},
		{service, runtime.ActionReadContent, runtime.Run{StartedByService: service.Name}, true},
		{runtime.Actor{Name: "other", Role: runtime.RoleService, Scopes: []string{"read"}}, runtime.ActionReadContent, runtime.Run{StartedByService: service.Name}, false},
		{runtime.Actor{Name: "c", Role: runtime.RoleService, Scopes: []string{"read", "content"}}, runtime.ActionReadContent, other, true},
		{runtime.Actor{Name: "c", Role: runtime.RoleService, Scopes: []string{"content"}}, runtime.ActionReadContent, other, false},
		{disabled, runtime.ActionReadContent, other, false},
	}
	for _, c := range cases {
		if got := runtime.MayAct(c.actor, c.action, c.run); got != c.want {
			t.Errorf("MayAct(%s uid %d, %s, owner %d) = %v, want %v", c.actor.Role, c.actor.UserUID, c.action, c.run.BeUser, got, c.want)
		}
	}
}
