package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/runtime/applied"
	"runsdesk/runtime/apply"
	"runsdesk/views"
)

// actionConfigurationExport is the audit action of a download of the applied configuration.
const actionConfigurationExport = "configuration_export"

// Applied reads back what `apply -f` applied (*applied.Desk): as the configuration page shows
// it, and as an apply file. A store failure is an error.
type Applied interface {
	View(ctx context.Context, now time.Time) (applied.View, error)
	Export(ctx context.Context) ([]byte, error)
}

// adminConfiguration is GET /admin/configuration (admins): what `apply -f` applied, read-only
// (configurations, notify rules with their last delivery, tools with their input tier and pin
// digest, MCP servers with their drift, standing approvals with their uses). Viewing changes
// nothing and is not audited. 404 without Config.Applied.
func (h *Handlers) adminConfiguration(c echo.Context) error {
	if h.applied == nil {
		return echo.ErrNotFound
	}
	now := h.now()
	v, err := h.applied.View(c.Request().Context(), now)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, views.ConfigurationPage(h.page(c, "Configuration", views.NavConfiguration), appliedDesk(v, now)))
}

// adminConfigurationYAML is GET /admin/configuration.yaml (admins): what `apply -f` applied
// as an apply file it accepts unchanged, downloaded as runsdesk.yaml. The download is
// audited (configuration_export), as the audit trail's export is. 404 without
// Config.Applied.
func (h *Handlers) adminConfigurationYAML(c echo.Context) error {
	if h.applied == nil {
		return echo.ErrNotFound
	}
	file, err := h.applied.Export(c.Request().Context())
	if err != nil {
		return err
	}
	h.audit(c, actionConfigurationExport, outcomeSuccess, fmt.Sprintf("runsdesk.yaml, %d bytes", len(file)))
	c.Response().Header().Set("Content-Disposition", "attachment; filename=runsdesk.yaml")
	return c.Blob(http.StatusOK, "application/yaml", file)
}

// appliedDesk is v as the configuration page shows it.
func appliedDesk(v applied.View, now time.Time) views.AppliedDesk {
	d := views.AppliedDesk{Now: now}
	for _, c := range v.Configurations {
		d.Configurations = append(d.Configurations, views.AppliedConfiguration{Identifier: c.Identifier, Name: c.Name,
			Provider: providerText(c.Configuration), Tools: c.Tools,
			Approvals: approvals(c.Quorum.Required, c.Quorum.AutomaticVote, c.RequireSecondApprover), Wait: waitText(c.Configuration)})
		for i, r := range c.Notify {
			dl := c.Deliveries[i]
			d.Notify = append(d.Notify, views.AppliedNotify{Configuration: c.Identifier, On: notifyEvents(r.Events),
				Channel: r.Channel, Target: notifyTarget(r), LastSent: unixTime(dl.LastSent), LastSentEvent: string(dl.LastSentEvent),
				LastFailed: unixTime(dl.LastFailed), LastFailedEvent: string(dl.LastFailedEvent)})
		}
	}
	for _, t := range v.Tools {
		at := views.AppliedTool{Name: t.Name, Reach: "HTTP " + t.HTTP.URL, Effect: string(t.Effect),
			Approval: t.RequiresApproval || t.Effect.IsWrite(), PinDigest: t.PinDigest}
		switch {
		case t.MCP != nil:
			at.Reach = "MCP " + t.MCP.Server + " / " + t.MCP.Tool
		case t.Declared():
			at.Reach = "nowhere: declared for external requests"
		}
		if at.Effect == "" {
			at.Effect = "read_only"
		}
		if t.Tier != nil {
			at.Tier = t.Tier.String()
		}
		d.Tools = append(d.Tools, at)
	}
	for _, s := range v.Servers {
		as := views.AppliedServer{Name: s.Name, URL: s.URL, Unreachable: s.Unreachable}
		for name := range s.Headers {
			as.Headers = append(as.Headers, name)
		}
		slices.Sort(as.Headers)
		for _, t := range s.Tools {
			as.Tools = append(as.Tools, views.AppliedServerTool{Name: t.Name, Tool: t.Tool, Drift: string(t.Drift)})
		}
		d.Servers = append(d.Servers, as)
	}
	for _, r := range v.StandingApprovals {
		d.Rules = append(d.Rules, views.AppliedRule{Name: r.Name, Tool: r.Tool, Configuration: r.Configuration,
			Until: unixTime(r.Until), Uses: ruleUses(r.StandingApproval), State: ruleState(r, v.Now)})
	}
	return d
}

// providerText is what runs c's turns: its provider and model, or for kind: external the
// callers that bring its requests.
func providerText(c runtime.Configuration) string {
	if e := c.External; e != nil {
		text := "external: requests from " + strings.Join(e.Callers, ", ")
		if e.AdHoc {
			text += " (ad hoc allowed)"
		}
		if len(e.CallbackHosts) > 0 {
			text += "; callbacks to " + strings.Join(e.CallbackHosts, ", ")
		}
		return text
	}
	return strings.TrimSpace(c.Provider.Kind + " " + c.Provider.Model)
}

// approvals says how many approvals a turn needs: "1", "2, one may be automatic", with ",
// four-eyes" when the run's initiator may not approve.
func approvals(required int, automatic, fourEyes bool) string {
	s := strconv.Itoa(max(required, 1))
	if automatic {
		s += ", one may be automatic"
	}
	if fourEyes {
		s += ", four-eyes"
	}
	return s
}

// waitText is c's waiting policy ("escalate after 4h"), "" for none.
func waitText(c runtime.Configuration) string {
	if c.Wait.IsZero() {
		return ""
	}
	return string(c.Wait.OnExpiry) + " after " + apply.FormatDuration(c.Wait.ExpiresAfter)
}

// notifyEvents lists a rule's events.
func notifyEvents(events []runtime.NotifyEvent) string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// notifyTarget is where a rule sends: a webhook's URL, an email's recipients, the variable
// holding a Slack webhook's URL (never a secret).
func notifyTarget(r runtime.NotifyRule) string {
	switch r.Channel {
	case runtime.ChannelEmail:
		to := slices.Clone(r.To)
		if r.ToPeople {
			to = append(to, "the person concerned")
		}
		return strings.Join(to, ", ")
	case runtime.ChannelSlack:
		return "$" + r.WebhookURLEnv
	}
	return r.URL
}

// ruleUses is a standing approval's uses and their bound: "12 of 1000", "12".
func ruleUses(r runtime.StandingApproval) string {
	if r.MaxUses == 0 {
		return strconv.FormatInt(r.Uses, 10)
	}
	return fmt.Sprintf("%d of %d", r.Uses, r.MaxUses)
}

// ruleState says whether a standing approval approves at now, and if not why.
func ruleState(r applied.Rule, now int64) string {
	switch {
	case r.Active:
		return "in force"
	case r.Revoked != 0 && r.RevokedBy != "":
		return "revoked by " + r.RevokedBy
	case r.Revoked != 0:
		return "revoked"
	case r.Until != 0 && now >= r.Until:
		return "expired"
	}
	return "used up"
}
