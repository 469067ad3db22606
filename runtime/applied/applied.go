// Package applied is the admin's read-only view of what `runsdesk apply -f` stored, and its
// download as an apply file: it reads the stored desk back (runtime.AppliedReads), labels
// each input schema with its tier, asks each MCP server whether it still describes its tools
// as they were applied (drift), and finds each notify rule's last delivery. Changes stay
// with `apply -f`.
package applied

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// DriftTimeout bounds how long the view waits for one MCP server's tools/list.
const DriftTimeout = 5 * time.Second

// Config wires a Desk. Store is required.
type Config struct {
	Store runtime.AppliedReads
	// HTTPClient reaches the MCP servers (a fresh client when nil); Getenv expands the ${VAR}
	// references of their headers (os.Getenv when nil).
	HTTPClient *http.Client
	Getenv     func(string) string
}

// Desk reads back what `apply -f` stored. It is safe for concurrent use.
type Desk struct {
	store  runtime.AppliedReads
	client *http.Client
	getenv func(string) string
}

// New returns a Desk for cfg.
func New(cfg Config) *Desk {
	return &Desk{store: cfg.Store, client: cfg.HTTPClient, getenv: cfg.Getenv}
}

// View is the applied desk as the admin's page shows it.
type View struct {
	Configurations    []Configuration
	Tools             []Tool
	Servers           []Server
	StandingApprovals []Rule
	// Now is when the view was read (unix seconds), which rules in force are judged at.
	Now int64
}

// Configuration is a stored configuration with the last delivery of each of its notify
// rules, in the rules' order.
type Configuration struct {
	runtime.Configuration
	Deliveries []Delivery
}

// Delivery is when a notify rule's latest notification was sent (LastSent) and when the
// event of its latest one given up occurred (LastFailed), unix seconds, 0 when none is among
// the latest runtime.AppliedNotifications of each; with the events they were about.
type Delivery struct {
	LastSent        int64
	LastSentEvent   runtime.NotifyEvent
	LastFailed      int64
	LastFailedEvent runtime.NotifyEvent
}

// Tool is a stored tool with the tier of its input schema (nil without one) and, for a remote
// tool, its pin digest: the digest of its server's description pinned when it was applied
// (a call is refused while the server describes it otherwise).
type Tool struct {
	tool.Definition
	Tier      *schema.TierReport
	PinDigest string
}

// Server is an MCP server the remote tools reach, as the apply file names it, with what its
// tools/list says now of each of its tools; Unreachable says why it could not be asked ("":
// it answered).
type Server struct {
	apply.MCPServerSpec
	Tools       []ServerTool
	Unreachable string
}

// ServerTool is one remote tool of a server: its name on the desk, its name on the server
// and its drift.
type ServerTool struct {
	Name, Tool string
	Drift      Drift
}

// Drift is how a server's listing of a tool compares with what was applied.
type Drift string

// The drifts of a remote tool.
const (
	DriftNone     Drift = "unchanged"
	DriftChanged  Drift = "changed"
	DriftUnlisted Drift = "no longer listed"
	DriftUnknown  Drift = "unknown"
)

// Rule is a stored standing approval and whether it may approve at View.Now.
type Rule struct {
	runtime.StandingApproval
	Active bool
}

// Export is what `apply -f` stored, written as an apply file (apply.Export).
func (d *Desk) Export(ctx context.Context) ([]byte, error) {
	desk, err := d.store.AppliedDesk(ctx)
	if err != nil {
		return nil, err
	}
	return apply.Export(desk)
}

// View reads what `apply -f` stored and asks every MCP server, at once and for at most
// DriftTimeout, for its listing. now is when it is read.
func (d *Desk) View(ctx context.Context, now time.Time) (View, error) {
	desk, err := d.store.AppliedDesk(ctx)
	if err != nil {
		return View{}, err
	}
	v := View{Now: now.Unix()}
	deliveries := lastDeliveries(desk)
	for _, c := range desk.Configurations {
		vc := Configuration{Configuration: c}
		for _, r := range c.Notify {
			vc.Deliveries = append(vc.Deliveries, deliveries[deliveryKey(c.Identifier, r)])
		}
		v.Configurations = append(v.Configurations, vc)
	}
	for _, t := range desk.Tools {
		vt := Tool{Definition: t}
		if len(t.InputSchema) > 0 {
			tier := schema.Classify(t.InputSchema)
			vt.Tier = &tier
		}
		if t.MCP != nil {
			vt.PinDigest = t.MCP.Digest
		}
		v.Tools = append(v.Tools, vt)
	}
	v.Servers = d.servers(ctx, desk.Tools, apply.FileOf(desk).MCPServers)
	for _, r := range desk.StandingApprovals {
		v.StandingApprovals = append(v.StandingApprovals, Rule{StandingApproval: r, Active: r.Active(v.Now)})
	}
	return v, nil
}

// servers asks each of specs, concurrently, for its listing and compares it with the stored
// remote tools.
func (d *Desk) servers(ctx context.Context, tools []tool.Definition, specs []apply.MCPServerSpec) []Server {
	out := make([]Server, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		out[i] = Server{MCPServerSpec: spec}
		wg.Go(func() { out[i] = d.drift(ctx, out[i], tools) })
	}
	wg.Wait()
	return out
}

// drift fills s with its remote tools and what its listing says of each.
func (d *Desk) drift(ctx context.Context, s Server, tools []tool.Definition) Server {
	ctx, cancel := context.WithTimeout(ctx, DriftTimeout)
	defer cancel()
	srv := tool.MCPServer{URL: s.URL, Headers: s.Headers}
	if s.Timeout != nil {
		srv.Timeout = time.Duration(*s.Timeout)
	}
	listed, err := tool.ListMCP(ctx, srv, d.client, d.getenv)
	if err != nil {
		s.Unreachable = err.Error()
	}
	for _, t := range tools {
		if t.MCP == nil || t.MCP.Server != s.Name {
			continue
		}
		st := ServerTool{Name: t.Name, Tool: t.MCP.Tool, Drift: DriftNone}
		lt, ok := listed[t.MCP.Tool]
		switch {
		case err != nil:
			st.Drift = DriftUnknown
		case !ok:
			st.Drift = DriftUnlisted
		case lt.Digest != t.MCP.Digest:
			st.Drift = DriftChanged
		}
		s.Tools = append(s.Tools, st)
	}
	return s
}

// lastDeliveries is the last delivery of every (configuration, rule) desk's notifications
// were sent for, by deliveryKey.
func lastDeliveries(desk runtime.AppliedDesk) map[string]Delivery {
	out := map[string]Delivery{}
	for _, n := range desk.Sent {
		k := deliveryKey(n.ConfigurationIdentifier, n.Rule)
		if dl := out[k]; dl.LastSent == 0 {
			dl.LastSent, dl.LastSentEvent = n.SentAt, n.Event
			out[k] = dl
		}
	}
	for _, n := range desk.Failed {
		k := deliveryKey(n.ConfigurationIdentifier, n.Rule)
		if dl := out[k]; dl.LastFailed == 0 {
			dl.LastFailed, dl.LastFailedEvent = n.OccurredAt, n.Event
			out[k] = dl
		}
	}
	return out
}

// deliveryKey identifies rule r of configuration identifier; a rule that mails people is one
// rule whoever it was addressed to.
func deliveryKey(identifier string, r runtime.NotifyRule) string {
	if r.ToPeople {
		r.To = nil
	}
	b, _ := json.Marshal(r)
	return identifier + "\x00" + string(b)
}
