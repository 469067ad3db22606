package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
)

// httpScenarios sign in the clients (as the bench admin), spread over the apps at bases in
// turn, and request GET /runs for each of o.scenarios: the first page, the page filtered by
// o.filter, the page after the deep cursor, the Mine tab (assigned=me) and the assignee
// filter naming a colleague (assignee=bench-reviewer).
func httpScenarios(ctx context.Context, o options, bases []string, deep cursor) ([]scenario, error) {
	clients, err := benchapp.SignIn(ctx, bases, slices.Max(o.clients))
	if err != nil {
		return nil, err
	}
	paths := map[string]string{
		scenarioFirst:    "/runs",
		scenarioFiltered: "/runs?" + o.filter,
		scenarioDeep:     fmt.Sprintf("/runs?after=%d-%d", deep.at, deep.uid),
		scenarioMine:     "/runs?assigned=me",
		scenarioAssignee: "/runs?assignee=" + url.QueryEscape(benchenv.Users[1].Name),
	}
	var out []scenario
	for _, name := range o.scenarios {
		path := paths[name]
		status, body, err := clients[0].Get(ctx, path)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("GET %s answers %d: the inbox page is not there (yet)", path, status)
		}
		if !bytes.Contains(body, []byte(`rel="next"`)) {
			fmt.Printf("# http: %s has no next-page link\n", path)
		}
		out = append(out, scenario{name: name, op: get(clients, path), bytes: len(body)})
	}
	return out, nil
}

func get(clients []*benchapp.Client, path string) func(context.Context, int) error {
	return func(ctx context.Context, c int) error {
		status, _, err := clients[c].Get(ctx, path)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET %s: status %d", path, status)
		}
		return nil
	}
}
