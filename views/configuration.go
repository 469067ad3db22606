package views

import "time"

// ConfigurationPath is the read-only view of what `apply -f` applied (admins);
// ConfigurationYAMLPath its download as an apply file.
const (
	ConfigurationPath     = "/admin/configuration"
	ConfigurationYAMLPath = "/admin/configuration.yaml"
)

// AppliedDesk is what `apply -f` applied, as the configuration page shows it.
type AppliedDesk struct {
	Configurations []AppliedConfiguration
	Notify         []AppliedNotify
	Tools          []AppliedTool
	Servers        []AppliedServer
	Rules          []AppliedRule
	Now            time.Time
}

// AppliedConfiguration is one configuration: its identifier and name, its provider ("openai
// llama3.1"), the tools it offers, its approvals (how many, four-eyes) and its wait policy
// ("" for none).
type AppliedConfiguration struct {
	Identifier, Name, Provider string
	Tools                      []string
	Approvals                  string
	Wait                       string
}

// AppliedNotify is one notify rule of a configuration: the events, the channel and its
// target (a URL, recipients, an environment variable's name), and when its notifications were
// last sent and last given up (zero: none among the latest), with their events.
type AppliedNotify struct {
	Configuration, On, Channel, Target string
	LastSent, LastFailed               time.Time
	LastSentEvent, LastFailedEvent     string
}

// AppliedTool is one tool: where it is reached ("HTTP url", "MCP server/tool"), its effect,
// whether it needs approval, its input schema's tier ("" without one) and its pin digest (a
// remote tool's; "" for an HTTP tool).
type AppliedTool struct {
	Name, Reach, Effect string
	Approval            bool
	Tier                string
	PinDigest           string
}

// AppliedServer is one MCP server: its address, the names of its headers (never their
// values), why it could not be asked ("" when it answered) and its tools with their drift.
type AppliedServer struct {
	Name, URL   string
	Headers     []string
	Unreachable string
	Tools       []AppliedServerTool
}

// AppliedServerTool is a remote tool of a server and its drift ("unchanged", "changed", "no
// longer listed", "unknown").
type AppliedServerTool struct {
	Name, Tool, Drift string
}

// Drifted reports whether the server describes the tool otherwise than applied.
func (t AppliedServerTool) Drifted() bool { return t.Drift != "unchanged" }

// AppliedRule is one standing approval: its tool and configuration ("" = any offering the
// tool), until when (zero: no end), its uses and bound ("12 of 1000", "12"), and its state
// ("in force", "expired", "used up", "revoked by apply", "revoked by cli").
type AppliedRule struct {
	Name, Tool, Configuration string
	Until                     time.Time
	Uses                      string
	State                     string
}
