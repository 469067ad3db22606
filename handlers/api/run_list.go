package api

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// Page size of GET /runs.
const (
	defaultListLimit = 50
	maxListLimit     = 100
	maxSearchText    = 200
)

// runListJSON is a page of GET /runs; NextCursor is null on the last page.
type runListJSON struct {
	Runs       []runJSON `json:"runs"`
	NextCursor *string   `json:"next_cursor"`
}

// listRuns is GET /runs?status=&configuration=&tool=&q=&limit=&cursor=: one keyset page of
// runs, each as GET /runs/:uuid shows it but for its output. status is a group (waiting, the default; active;
// finished), one status, or a comma list of statuses of one group; configuration, tool and q
// filter and search as the inbox does (tool: waiting runs only); limit is 1..100 (50);
// cursor is the next_cursor of the page before. Anything else is 400 invalid_request.
func (a *API) listRuns(c echo.Context) error {
	q, err := a.runsQuery(c)
	if err != nil {
		return err
	}
	limit := q.Limit
	q.Limit++
	views, err := a.rt.List(c.Request().Context(), actorOf(c), q)
	if err != nil {
		return fromRuntime(err)
	}
	out := runListJSON{Runs: make([]runJSON, 0, min(len(views), limit))}
	for _, v := range views[:min(len(views), limit)] {
		out.Runs = append(out.Runs, toRunJSON(v))
	}
	if len(views) > limit {
		next := encodeCursor(q.Group, views[limit-1].Run)
		out.NextCursor = &next
	}
	return c.JSON(http.StatusOK, out)
}

// runsQuery validates GET /runs's query string into the runtime's query.
func (a *API) runsQuery(c echo.Context) (runtime.RunsQuery, error) {
	params := c.QueryParams()
	for name, values := range params {
		if !slices.Contains([]string{"status", "configuration", "tool", "q", "limit", "cursor"}, name) {
			return runtime.RunsQuery{}, invalid(fmt.Sprintf("the query parameter %q is not accepted", name))
		}
		if len(values) != 1 {
			return runtime.RunsQuery{}, invalid(fmt.Sprintf("the query parameter %q is given more than once", name))
		}
		if !utf8.ValidString(values[0]) || strings.ContainsRune(values[0], 0) {
			return runtime.RunsQuery{}, invalid(fmt.Sprintf("the query parameter %q is not valid text", name))
		}
	}
	group, statuses, err := parseStatuses(params.Get("status"))
	if err != nil {
		return runtime.RunsQuery{}, err
	}
	q := runtime.RunsQuery{Group: group, Statuses: statuses, Limit: defaultListLimit}
	if s := params.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxListLimit {
			return q, invalid(fmt.Sprintf("limit must be an integer from 1 to %d", maxListLimit))
		}
		q.Limit = n
	}
	if tool := strings.TrimSpace(params.Get("tool")); tool != "" {
		if !runtime.ToolFilter(tool) {
			return q, invalid("tool must be a tool name (letters, digits, _ and -)")
		}
		if group != runtime.GroupWaiting {
			return q, invalid("tool filters waiting runs (the tools a pause waits on); use it with a waiting status")
		}
		q.Filter.Tool = tool
	}
	if text := strings.TrimSpace(params.Get("q")); text != "" {
		if utf8.RuneCountInString(text) > maxSearchText {
			return q, invalid(fmt.Sprintf("q must be at most %d characters", maxSearchText))
		}
		q.Filter.SetSearch(text)
	}
	if id := strings.TrimSpace(params.Get("configuration")); id != "" {
		uid, err := a.configurationUID(c, id)
		if err != nil {
			return q, err
		}
		q.Filter.ConfigurationUID = uid
	}
	if s := params.Get("cursor"); s != "" {
		at, uid, ok := decodeCursor(s, group)
		if !ok {
			return q, invalid("cursor is not a next_cursor of this status group; start again without it")
		}
		q.AfterAt, q.AfterUID = at, uid
	}
	return q, nil
}

// parseStatuses reads ?status=: "" is waiting; a group name stands for its statuses; a comma
// list names statuses of one group.
func parseStatuses(s string) (runtime.RunGroup, []runtime.Status, error) {
	if s == "" {
		s = string(runtime.GroupWaiting)
	}
	if g := runtime.RunGroup(s); g.Statuses() != nil {
		return g, g.Statuses(), nil
	}
	var group runtime.RunGroup
	var out []runtime.Status
	for _, name := range strings.Split(s, ",") {
		st := runtime.Status(strings.TrimSpace(name))
		g := runtime.GroupOf(st)
		switch {
		case g == "":
			return "", nil, invalid(fmt.Sprintf("status %q is not a run status or group (waiting, active, finished)", name))
		case group != "" && g != group:
			return "", nil, invalid("status lists statuses of one group only (waiting, active or finished)")
		}
		group = g
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return group, out, nil
}

// configurationUID is the uid of the configuration with identifier id; an unknown one is 400.
func (a *API) configurationUID(c echo.Context, id string) (int64, error) {
	cfgs, err := a.rt.DisplayConfigurations(c.Request().Context())
	if err != nil {
		return 0, fromRuntime(err)
	}
	for _, cfg := range cfgs {
		if cfg.Identifier == id {
			return cfg.UID, nil
		}
	}
	return 0, invalid("configuration names no configuration")
}

// encodeCursor is the opaque position after run in group's order.
func encodeCursor(group runtime.RunGroup, run runtime.Run) string {
	at := run.SuspendedAt
	switch group {
	case runtime.GroupActive:
		at = run.Crdate
	case runtime.GroupFinished:
		at = run.FinishedAt
	}
	raw := string(group) + ":" + strconv.FormatInt(at, 10) + ":" + strconv.FormatInt(run.UID, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeCursor reads a cursor of group; any other text is not ok.
func decodeCursor(s string, group runtime.RunGroup) (at, uid int64, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, 0, false
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 3 || parts[0] != string(group) {
		return 0, 0, false
	}
	at, err1 := strconv.ParseInt(parts[1], 10, 64)
	uid, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || at < 0 || uid <= 0 {
		return 0, 0, false
	}
	return at, uid, true
}
