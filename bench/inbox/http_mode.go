package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"sync"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
)

var nextLink = regexp.MustCompile(`<a[^>]*rel="next"[^>]*href="([^"]+)"|<a[^>]*href="([^"]+)"[^>]*rel="next"`)

// httpScenarios sign in o.clients clients and request GET /runs: the first page, the page
// filtered by o.filter, and the page reached by following o.deepPages next-page links (or as
// many as there are).
func httpScenarios(ctx context.Context, o options, app *benchapp.App) ([]scenario, error) {
	clients, err := signIn(ctx, app.URL, o.clients)
	if err != nil {
		return nil, err
	}
	status, first, err := clients[0].Get(ctx, "/runs")
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET /runs answers %d: the inbox page is not there yet", status)
	}
	filtered := "/runs?" + o.filter
	status, fbody, err := clients[0].Get(ctx, filtered)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s answers %d", filtered, status)
	}
	deep, dbody, depth, err := followNext(ctx, clients[0], "/runs", first, o.deepPages)
	if err != nil {
		return nil, err
	}
	fmt.Printf("# http: deep page is %d next-links in: %s\n", depth, deep)
	get := func(path string) func(context.Context, int) error {
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
	return []scenario{
		{name: "first", op: get("/runs"), bytes: len(first)},
		{name: "filtered", op: get(filtered), bytes: len(fbody)},
		{name: "deep", op: get(deep), bytes: len(dbody)},
	}, nil
}

func followNext(ctx context.Context, c *benchapp.Client, path string, body []byte, pages int) (string, []byte, int, error) {
	depth := 0
	for ; depth < pages; depth++ {
		m := nextLink.FindSubmatch(body)
		if m == nil {
			break
		}
		next := html.UnescapeString(string(m[1]) + string(m[2]))
		status, b, err := c.Get(ctx, next)
		if err != nil {
			return "", nil, 0, err
		}
		if status != http.StatusOK {
			return "", nil, 0, fmt.Errorf("GET %s: status %d", next, status)
		}
		path, body = next, b
	}
	return path, body, depth, nil
}

// signIn returns n clients signed in as the bench admin, each with its own session.
func signIn(ctx context.Context, base string, n int) ([]*benchapp.Client, error) {
	clients := make([]*benchapp.Client, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := benchapp.NewClient(base)
			if err == nil {
				err = c.Login(ctx, benchenv.Users[0].Name, benchenv.Password)
			}
			clients[i], errs[i] = c, err
		}()
	}
	wg.Wait()
	return clients, errors.Join(errs...)
}
