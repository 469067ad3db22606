package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"

	"runsdesk/bench/benchapp"
)

// httpScenarios sign in the clients, spread over the apps at bases in turn, and request
// GET /runs: the first page, the page filtered by o.filter, and the page after the deep
// cursor.
func httpScenarios(ctx context.Context, o options, bases []string, deep cursor) ([]scenario, error) {
	clients, err := benchapp.SignIn(ctx, bases, slices.Max(o.clients))
	if err != nil {
		return nil, err
	}
	paths := []struct{ name, path string }{
		{"first", "/runs"},
		{"filtered", "/runs?" + o.filter},
		{"deep", fmt.Sprintf("/runs?after=%d-%d", deep.at, deep.uid)},
	}
	var out []scenario
	for _, p := range paths {
		status, body, err := clients[0].Get(ctx, p.path)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("GET %s answers %d: the inbox page is not there (yet)", p.path, status)
		}
		if !bytes.Contains(body, []byte(`rel="next"`)) {
			fmt.Printf("# http: %s has no next-page link\n", p.path)
		}
		out = append(out, scenario{name: p.name, op: get(clients, p.path), bytes: len(body)})
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
