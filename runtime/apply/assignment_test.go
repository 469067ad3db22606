package apply_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
)

// TestAssignmentKeys: `assignment:` is applied (reviewers_may_assign, strict, auto, pool), a
// change plans an update naming it, and an unknown strategy, a pool without auto, auto
// without a pool and a name listed twice are problems at their paths.
func TestAssignmentKeys(t *testing.T) {
	base := "configurations:\n" + okConfiguration
	full := base + "    assignment: {reviewers_may_assign: true, strict: true, auto: least_loaded, pool: [rita, bob]}\n"
	cat, a := appliedFile(t, full)
	want := runtime.AssignmentPolicy{ReviewersMayAssign: true, Strict: true, Auto: runtime.AutoLeastLoaded, Pool: []string{"rita", "bob"}}
	if got := cat.configs[0].Assignment; !got.Equal(want) {
		t.Fatalf("applied %+v, want %+v", got, want)
	}
	p, err := a.Plan(context.Background(), []byte(base))
	if err != nil || p.Changes[0].Action != apply.Update || !slices.Contains(p.Changes[0].Fields, "assignment") {
		t.Fatalf("dropping assignment: %+v, %v; want an update naming assignment", p, err)
	}
	_, err = a.Plan(context.Background(), []byte(base+"    assignment: {auto: random, pool: [rita, rita]}\n"))
	var ps apply.Problems
	if !errors.As(err, &ps) || len(ps) != 2 || !strings.HasPrefix(ps[0].String(), `configurations[0].assignment.auto: must be round_robin or least_loaded, got "random"`) ||
		!strings.HasPrefix(ps[1].String(), `configurations[0].assignment.pool[1]: "rita" is listed twice`) {
		t.Fatalf("bad auto and pool: %v", err)
	}
	for keys, want := range map[string]string{
		"    assignment: {pool: [rita]}\n":      "configurations[0].assignment.pool: needs auto",
		"    assignment: {auto: round_robin}\n": "configurations[0].assignment.pool: required with auto",
	} {
		_, err := a.Plan(context.Background(), []byte(base+keys))
		if !errors.As(err, &ps) || len(ps) != 1 || !strings.HasPrefix(ps[0].String(), want) {
			t.Errorf("%q: %v, want %q", keys, err, want)
		}
	}
}

// TestEmailToPeople: an email rule may send the assigned event to the assignee
// (to_people: true) without a to list; to_people without assigned in on, and other events
// without a to list, are problems.
func TestEmailToPeople(t *testing.T) {
	cat, _ := appliedFile(t, withNotify(`{on: [assigned], email: {to_people: true}}`))
	if r := cat.configs[0].Notify[0]; !r.ToPeople || len(r.To) != 0 || r.Events[0] != runtime.NotifyAssigned {
		t.Fatalf("applied rule %+v", r)
	}
	a := apply.New(apply.Config{Catalog: &fakeCatalog{}, Getenv: fullEnv})
	for entry, want := range map[string]string{
		`{on: [waiting], email: {to_people: true, to: [ops@example.com]}}`: "configurations[0].notify[0].email.to_people: applies to the assigned and mentioned events only",
		`{on: [assigned, waiting], email: {to_people: true}}`:              "configurations[0].notify[0].email.to: required for the events that concern no one person",
		`{on: [assigned], email: {}}`:                                      "configurations[0].notify[0].email.to: required: a list of addresses (or to_people: true",
	} {
		_, err := a.Plan(context.Background(), []byte(withNotify(entry)))
		var ps apply.Problems
		if !errors.As(err, &ps) || len(ps) != 1 || !strings.HasPrefix(ps[0].String(), want) {
			t.Errorf("%s: %v, want %q", entry, err, want)
		}
	}
}
