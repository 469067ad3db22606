package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"runsdesk/runtime"
	"runsdesk/runtime/retention"
	"runsdesk/views"
)

// Page sizes of the inbox and the recent list (?per=N overrides within the bounds).
const (
	defaultPerPage = 25
	maxPerPage     = 100
)

var (
	olderPattern = regexp.MustCompile(`^([1-9][0-9]{0,3})([mhd])$`)
)

// waitingAges are the choices of the "waiting longer than" filter.
var waitingAges = []views.Option{
	{Value: "5m", Label: "5 minutes"}, {Value: "15m", Label: "15 minutes"}, {Value: "1h", Label: "1 hour"},
	{Value: "4h", Label: "4 hours"}, {Value: "1d", Label: "1 day"}, {Value: "3d", Label: "3 days"},
	{Value: "7d", Label: "7 days"},
}

// cursor is a keyset position: (time, uid) of the last row of the page before.
type cursor struct {
	at, uid int64
}

func (k cursor) String() string {
	return strconv.FormatInt(k.at, 10) + "-" + strconv.FormatInt(k.uid, 10)
}

// parseCursor reads "<unix time>-<uid>"; "" is the first page. The time may be 0 (a row the
// TYPO3 extension wrote without one), the uid must be positive. It only positions a keyset
// scan: every row it leads to is still filtered and access-checked like the first page.
func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{}, nil
	}
	a, b, ok := strings.Cut(s, "-")
	at, err1 := strconv.ParseInt(a, 10, 64)
	uid, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || at < 0 || uid <= 0 {
		return cursor{}, badQuery("The page link is not valid. Go back to the first page.")
	}
	return cursor{at: at, uid: uid}, nil
}

// parsePer reads the page size; "" is the default.
func parsePer(s string) (int, error) {
	if s == "" {
		return defaultPerPage, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxPerPage {
		return 0, badQuery(fmt.Sprintf("The page size must be a number from 1 to %d.", maxPerPage))
	}
	return n, nil
}

// expiringSoon is how close an expiry the inbox's "expiring soon" filter shows.
const expiringSoon = time.Hour

// inboxQuery is the inbox's query string, validated.
type inboxQuery struct {
	filters views.InboxFilters
	per     int
	after   cursor
}

// parseInboxQuery validates the inbox's query parameters: kind (approval, input), configuration
// (an identifier), tool (a tool name), older (N followed by m, h or d), deadline (soon:
// expiring within an hour, soonest first; expiring: every run with a deadline, soonest first;
// escalated), q (search text, see
// inboxQuery.waiting; any text but invalid UTF-8 or NUL), assigned (me, none), assignee (a
// username), per (page size) and after (a page cursor). Anything else in them is a 400.
func parseInboxQuery(q url.Values) (inboxQuery, error) {
	f := views.InboxFilters{
		Kind: q.Get("kind"), Configuration: strings.TrimSpace(q.Get("configuration")), Tool: strings.TrimSpace(q.Get("tool")),
		Older: strings.TrimSpace(q.Get("older")), Query: strings.TrimSpace(q.Get("q")),
		Deadline: q.Get("deadline"), Assigned: q.Get("assigned"), Assignee: strings.TrimSpace(q.Get("assignee")),
	}
	switch {
	case f.Kind != "" && f.Kind != "approval" && f.Kind != "input":
		return inboxQuery{}, badQuery("The kind filter must be approval or input.")
	case len(f.Configuration) > 150:
		return inboxQuery{}, badQuery("The configuration filter is too long.")
	case f.Tool != "" && !runtime.ToolFilter(f.Tool):
		return inboxQuery{}, badQuery("The tool filter must be a tool name (letters, digits, _ and -).")
	case f.Older != "" && !olderPattern.MatchString(f.Older):
		return inboxQuery{}, badQuery("“Waiting longer than” must be a number followed by m, h or d, such as 15m, 4h or 2d.")
	case f.Deadline != "" && f.Deadline != views.DeadlineSoon && f.Deadline != views.DeadlineExpiring && f.Deadline != views.DeadlineEscalated:
		return inboxQuery{}, badQuery("The deadline filter must be soon, expiring or escalated.")
	case f.Assigned != "" && f.Assigned != views.AssignedMe && f.Assigned != views.AssignedNone:
		return inboxQuery{}, badQuery("The assigned filter must be me or none.")
	case len(f.Assignee) > 50 || !utf8.ValidString(f.Assignee) || strings.ContainsRune(f.Assignee, 0):
		return inboxQuery{}, badQuery("The assignee filter must be a username.")
	case !utf8.ValidString(f.Query) || strings.ContainsRune(f.Query, 0):
		return inboxQuery{}, badQuery("The search text is not valid text (UTF-8 without NUL characters).")
	}
	per, err := parsePer(q.Get("per"))
	if err != nil {
		return inboxQuery{}, err
	}
	after, err := parseCursor(q.Get("after"))
	if err != nil {
		return inboxQuery{}, err
	}
	return inboxQuery{filters: f, per: per, after: after}, nil
}

// waiting is the runtime query of iq for one page (plus one row, to know whether a next page
// exists). The search text is the start of a run id when it looks like one
// (runtime.RunIDStart, in any case), and otherwise searched for in run ids, configurations, tools and who started the run
// (runtime.WaitingQuery.Search). An unknown configuration identifier is a 400. me is the
// viewer's uid (the Mine tab), assignee the uid of the assignee filter's person (0: none).
func (iq inboxQuery) waiting(now time.Time, cfgs configIndex, me, assignee int64) (runtime.WaitingQuery, error) {
	q := runtime.WaitingQuery{Tool: iq.filters.Tool, AfterSuspendedAt: iq.after.at, AfterUID: iq.after.uid, Limit: iq.per + 1}
	switch {
	case iq.filters.Assigned == views.AssignedMe:
		q.Assignee = me
	case iq.filters.Assigned == views.AssignedNone:
		q.Unassigned = true
	case assignee > 0:
		q.Assignee = assignee
	}
	if iq.filters.ByExpiry() {
		q.ByExpiry, q.AfterSuspendedAt, q.AfterExpiresAt = true, 0, iq.after.at
	}
	switch iq.filters.Deadline {
	case views.DeadlineSoon:
		q.ExpiringBefore = now.Unix() + int64(expiringSoon/time.Second)
	case views.DeadlineEscalated:
		q.Escalated = true
	}
	q.SetSearch(iq.filters.Query)
	switch iq.filters.Kind {
	case "approval":
		q.Status = runtime.StatusWaitingApproval
	case "input":
		q.Status = runtime.StatusWaitingInput
	}
	if id := iq.filters.Configuration; id != "" {
		cfg, ok := cfgs.byIdentifier(id)
		if !ok {
			return q, badQuery("There is no configuration with that identifier.")
		}
		q.ConfigurationUID = cfg.UID
	}
	if m := olderPattern.FindStringSubmatch(iq.filters.Older); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]int64{"m": 60, "h": 3600, "d": 86400}[m[2]]
		q.WaitingSince = now.Unix() - int64(n)*unit
	}
	return q, nil
}

// url is the inbox address with iq's filters, kind replaced by kind and the page at after.
func (iq inboxQuery) url(kind string, after cursor) string {
	return iq.urlWhose(kind, iq.filters.Assigned, after)
}

// urlWhose is url with the whose tab replaced by assigned.
func (iq inboxQuery) urlWhose(kind, assigned string, after cursor) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("kind", kind)
	set("configuration", iq.filters.Configuration)
	set("tool", iq.filters.Tool)
	set("older", iq.filters.Older)
	set("q", iq.filters.Query)
	set("deadline", iq.filters.Deadline)
	set("assigned", assigned)
	set("assignee", iq.filters.Assignee)
	if iq.per != defaultPerPage {
		v.Set("per", strconv.Itoa(iq.per))
	}
	if after != (cursor{}) {
		v.Set("after", after.String())
	}
	if len(v) == 0 {
		return "/runs"
	}
	return "/runs?" + v.Encode()
}

// The assignee filter's usernames resolve through a memo of assigneesRemembered names, each
// served for assigneeFresh (as fresh as the catalog the inbox shows), so a page of the filter
// sends the inbox's two statements, not a third for the name. A username nobody has is not
// remembered.
const (
	assigneesRemembered = 256
	assigneeFresh       = 2 * time.Second
)

// assigneeUID is the uid of the person the inbox's assignee filter names (0 for none); a
// username nobody has is a 400.
func (h *Handlers) assigneeUID(ctx context.Context, username string) (int64, error) {
	if username == "" || h.people == nil {
		return 0, nil
	}
	uid, err := h.assignees.GetOrLoad(username, func() (int64, error) { return h.people.UserUID(ctx, username) })
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return 0, badQuery("There is no person with that username.")
	case err != nil:
		return 0, err
	}
	return uid, nil
}

// ageOptions are the "waiting longer than" choices, plus current when it was typed by hand.
func ageOptions(current string) []views.Option {
	out := slices.Clone(waitingAges)
	if current != "" && !slices.ContainsFunc(out, func(o views.Option) bool { return o.Value == current }) {
		out = append(out, views.Option{Value: current, Label: current})
	}
	return out
}

func badQuery(text string) error {
	return publicError(http.StatusBadRequest, "invalid_filter", text)
}

// configIndex is the catalog's configurations, indexed for labels and filters.
type configIndex struct {
	list  []runtime.Configuration
	byUID map[int64]runtime.Configuration
}

// configurations are the catalog's configurations as pages show them: the runtime's, read at
// most 2 s ago (Runtime.DisplayConfigurations). A store failure is as with
// currentConfigurations.
func (h *Handlers) configurations(ctx context.Context) (configIndex, error) {
	return indexConfigurations(h.rt.DisplayConfigurations(ctx))
}

// currentConfigurations reads the catalog's configurations now, for a request that starts a
// run. A store failure is a 503 (a *runtime.Error with CodeRunStateUnavailable wrapping it):
// the page cannot be built now.
func (h *Handlers) currentConfigurations(ctx context.Context) (configIndex, error) {
	return indexConfigurations(h.catalog.Configurations(ctx))
}

// indexConfigurations indexes list, or turns the failure to read it into a 503.
func indexConfigurations(list []runtime.Configuration, err error) (configIndex, error) {
	if err != nil {
		return configIndex{}, &runtime.Error{Code: runtime.CodeRunStateUnavailable,
			Message: "the configurations could not be loaded", Err: fmt.Errorf("load configurations: %w", err)}
	}
	ix := configIndex{list: list, byUID: make(map[int64]runtime.Configuration, len(list))}
	for _, c := range list {
		ix.byUID[c.UID] = c
	}
	return ix, nil
}

// privacy is the privacy mode of run's configuration: metadata when that no longer exists.
func (ix configIndex) privacy(run runtime.Run) runtime.Privacy {
	return ix.byUID[run.ConfigurationUID].Privacy.OrMetadata()
}

// retention is the policy run's content is kept by: its configuration's, the default when
// that no longer exists.
func (ix configIndex) retention(run runtime.Run) retention.Policy {
	if c, ok := ix.byUID[run.ConfigurationUID]; ok {
		return c.Retention
	}
	return retention.Default()
}

func (ix configIndex) byIdentifier(id string) (runtime.Configuration, bool) {
	for _, c := range ix.list {
		if c.Identifier == id {
			return c, true
		}
	}
	return runtime.Configuration{}, false
}

// label is how a run's configuration is named: the configuration's name, else the identifier
// stored on the run.
func (ix configIndex) label(run runtime.Run) string {
	if c, ok := ix.byUID[run.ConfigurationUID]; ok && c.Name != "" {
		return c.Name
	}
	if run.ConfigurationIdentifier != "" {
		return run.ConfigurationIdentifier
	}
	return "Configuration #" + strconv.FormatInt(run.ConfigurationUID, 10)
}

// options are the configurations as select choices (value: identifier).
func (ix configIndex) options() []views.Option {
	out := make([]views.Option, 0, len(ix.list))
	for _, c := range ix.list {
		label := c.Identifier
		if c.Name != "" && c.Name != c.Identifier {
			label = c.Name + " (" + c.Identifier + ")"
		}
		out = append(out, views.Option{Value: c.Identifier, Label: label})
	}
	return out
}

// startable are the options of the configurations a person may start a run of: all but the
// external ones, which run no model.
func (ix configIndex) startable() []views.Option {
	agents := configIndex{list: slices.DeleteFunc(slices.Clone(ix.list), runtime.Configuration.IsExternal)}
	return agents.options()
}

// toolOptions are the tools any configuration offers, sorted, plus current if none does.
func (ix configIndex) toolOptions(current string) []views.Option {
	var names []string
	for _, c := range ix.list {
		names = append(names, c.Tools...)
	}
	if current != "" {
		names = append(names, current)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]views.Option, len(names))
	for i, n := range names {
		out[i] = views.Option{Value: n, Label: n}
	}
	return out
}

// pageURL is the address of a keyset page of the list at path: the page size (when not the
// default) and the cursor (when not the first page) under the query key param.
func pageURL(path, param string, per int, at cursor) string {
	v := url.Values{}
	if per != defaultPerPage {
		v.Set("per", strconv.Itoa(per))
	}
	if at != (cursor{}) {
		v.Set(param, at.String())
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}
