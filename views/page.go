// Package views holds runsdesk's templ components: the page frame (Layout), the pages, and
// shared components (status badge, relative time, field error, error summary). Every page
// takes a Page, built by the handlers, so the frame always has the signed-in user, the CSRF
// token, the flash messages and the asset paths. Views never bypass templ's escaping;
// TestNoEscapeHatches lists the banned functions and fails on any use.
package views

import "strconv"

// Nav names the main navigation entry a page belongs to, so the layout can mark it current.
type Nav string

// Navigation entries. NavNone marks no entry.
const (
	NavNone   Nav = ""
	NavInbox  Nav = "inbox"
	NavRecent Nav = "recent"
	NavStart  Nav = "start"
	NavAudit  Nav = "audit"
	NavQueue  Nav = "queue"
	// NavConfiguration is the configuration page (admins).
	NavConfiguration Nav = "configuration"
)

// FlashKind is how a flash message is presented: success and info are announced politely,
// errors assertively.
type FlashKind string

// Flash kinds.
const (
	FlashSuccess FlashKind = "success"
	FlashInfo    FlashKind = "info"
	FlashError   FlashKind = "error"
)

// Flash is a one-time message shown on the next page a person sees (after a redirect).
type Flash struct {
	Kind FlashKind
	Text string
}

// User is the signed-in person as the frame shows them. CanStart decides whether the
// "Start a run" entry is offered, SeesQueue whether "Queue health" is (admins, reviewers),
// TYPO3Runs whether "TYPO3 runs" is (the TYPO3 extension's runs are listed: TYPO3RunsPath).
type User struct {
	Name      string
	Role      string
	CanStart  bool
	SeesQueue bool
	TYPO3Runs bool
}

// RoleLabel is the role as shown next to the user name.
func (u User) RoleLabel() string {
	switch u.Role {
	case "admin":
		return "Admin"
	case "reviewer":
		return "Reviewer"
	case "support":
		return "Support"
	}
	return u.Role
}

// Assets are the content-hashed paths of the stylesheet, script, live desk worker and icon.
type Assets struct {
	CSS     string
	JS      string
	Worker  string
	Favicon string
}

// EventsPath is the live desk's event stream (Server-Sent Events) the pages' script follows.
const EventsPath = "/events"

// EventsURL is the stream a page rendered at the desk's cursor after follows: from there on
// (?after=), so nothing that changed between the page and its stream is missed; a negative
// cursor (not known yet) is the stream from now.
func EventsURL(after int64) string {
	if after < 0 {
		return EventsPath
	}
	return EventsPath + "?after=" + strconv.FormatInt(after, 10)
}

// Page is what every page passes to Layout. User is nil for anonymous visitors; CSRF is the
// session's token, rendered into every form (name "_csrf"); Flashes are shown once.
type Page struct {
	Title     string
	Nav       Nav
	User      *User
	CSRF      string
	Flashes   []Flash
	Assets    Assets
	RequestID string
	// Restricted hides the navigation and the account link: the person may only enrol a
	// second factor or sign out (--require-mfa).
	Restricted bool
	// EventsURL is the live desk's stream the page's script follows ("": none).
	EventsURL string
}

// Live reports whether the page follows the live desk: a signed-in person's page that is not
// restricted to enrolment.
func (p Page) Live() bool { return p.User != nil && !p.Restricted && p.EventsURL != "" }

// DocumentTitle is the <title>: the page title followed by the product name.
func (p Page) DocumentTitle() string {
	if p.Title == "" {
		return "runsdesk"
	}
	return p.Title + " · runsdesk"
}

// NavItem is one entry of the main navigation.
type NavItem struct {
	ID     string
	Label  string
	Href   string
	Active bool
}

// NavItems returns the navigation entries the signed-in user may use, in display order: Inbox
// and Recent runs for everyone, TYPO3 runs only when User.TYPO3Runs, Queue health only when
// User.SeesQueue, Start a run only when User.CanStart, Audit trail, Configuration, People and
// API tokens for admins. Anonymous: none.
func (p Page) NavItems() []NavItem {
	if p.User == nil || p.Restricted {
		return nil
	}
	items := []NavItem{
		{ID: string(NavInbox), Label: "Inbox", Href: "/runs", Active: p.Nav == NavInbox},
		{ID: string(NavRecent), Label: "Recent runs", Href: "/runs/recent", Active: p.Nav == NavRecent},
	}
	if p.User.TYPO3Runs {
		items = append(items, NavItem{ID: string(NavTYPO3Runs), Label: "TYPO3 runs", Href: TYPO3RunsPath, Active: p.Nav == NavTYPO3Runs})
	}
	if p.User.SeesQueue {
		items = append(items, NavItem{ID: string(NavQueue), Label: "Queue health", Href: QueuePath, Active: p.Nav == NavQueue})
	}
	if p.User.CanStart {
		items = append(items, NavItem{ID: string(NavStart), Label: "Start a run", Href: "/runs/new", Active: p.Nav == NavStart})
	}
	if p.User.Role == "admin" {
		items = append(items, NavItem{ID: string(NavAudit), Label: "Audit trail", Href: AuditPath, Active: p.Nav == NavAudit},
			NavItem{ID: string(NavConfiguration), Label: "Configuration", Href: ConfigurationPath, Active: p.Nav == NavConfiguration},
			NavItem{ID: string(NavPeople), Label: "People", Href: AdminPeoplePath, Active: p.Nav == NavPeople},
			NavItem{ID: string(NavTokens), Label: "API tokens", Href: AdminTokensPath, Active: p.Nav == NavTokens})
	}
	return items
}
