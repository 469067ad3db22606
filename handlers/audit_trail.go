package handlers

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// Audit actions of the audit trail's own page.
const (
	actionAuditView   = "audit_view"
	actionAuditExport = "audit_export"
)

// auditExportFields are the columns of an export, as `runsdesk audit list` names them.
func auditExportFields() []string {
	return []string{"id", "time", "actor", "actor_uid", "ip", "action", "run", "outcome", "reason", "chain_seq"}
}

// auditTrail is GET /audit (admins): one keyset page of the audit rows the query's filters
// select (actor, action, run, outcome, since and until dates in UTC, until inclusive), newest
// first (?before= the last uid of the page before, ?per= the page size; invalid values are
// 400), read in one statement (two with a time range). The view is itself audited (audit_view).
func (h *Handlers) auditTrail(c echo.Context) error {
	f, shown, err := parseAuditQuery(c.QueryParams())
	if err != nil {
		return err
	}
	per, err := parsePer(c.QueryParam("per"))
	if err != nil {
		return err
	}
	if b := c.QueryParam("before"); b != "" {
		if f.Before, err = strconv.ParseInt(b, 10, 64); err != nil || f.Before <= 0 {
			return badQuery("The page link is not valid. Go back to the first page.")
		}
	}
	f.Limit = per + 1
	rows, err := h.auditor.ListAudit(c.Request().Context(), f)
	if err != nil {
		return err
	}
	a := views.AuditTrail{Filters: shown, Now: h.now(),
		CSVURL: auditURL(views.AuditExportPath, shown, "format", "csv"), JSONLURL: auditURL(views.AuditExportPath, shown, "format", "jsonl")}
	if len(rows) > per {
		rows = rows[:per]
		a.NextURL = auditURL(views.AuditPath, shown, "before", strconv.FormatInt(rows[per-1].UID, 10), "per", perParam(per))
	}
	if f.Before > 0 {
		a.FirstURL = auditURL(views.AuditPath, shown, "per", perParam(per))
	}
	for _, r := range rows {
		a.Rows = append(a.Rows, views.AuditRow{UID: r.UID, Time: unixTime(r.Time), Actor: r.ActorName, ActorUID: r.ActorUID,
			IP: r.IP, Action: r.Action, RunUUID: r.RunUUID, Outcome: r.Outcome, Reason: r.Reason, ChainSeq: r.ChainSeq})
	}
	h.audit(c, actionAuditView, outcomeSuccess, strings.TrimSpace(fmt.Sprintf("%d rows %s", len(a.Rows), f)))
	return h.render(c, http.StatusOK, views.AuditPage(h.page(c, "Audit trail", views.NavAudit), a))
}

// auditExport is GET /audit/export (admins): every audit row the filters of /audit select,
// newest first, as CSV (?format=csv, a header row) or JSON Lines (?format=jsonl), streamed in
// pages of runtime.MaxAuditPage rows; the columns are those of `runsdesk audit list`. The
// export is itself audited (audit_export) before it starts.
func (h *Handlers) auditExport(c echo.Context) error {
	f, _, err := parseAuditQuery(c.QueryParams())
	if err != nil {
		return err
	}
	format := c.QueryParam("format")
	if format != "csv" && format != "jsonl" {
		return badQuery("The export format must be csv or jsonl.")
	}
	h.audit(c, actionAuditExport, outcomeSuccess, strings.TrimSpace("format="+format+" "+f.String()))
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, map[string]string{"csv": "text/csv; charset=utf-8", "jsonl": "application/jsonl; charset=utf-8"}[format])
	res.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="audit-%s.%s"`, h.now().UTC().Format("20060102T150405Z"), format))
	res.WriteHeader(http.StatusOK)
	w := csv.NewWriter(res)
	if format == "csv" {
		_ = w.Write(auditExportFields())
	}
	enc := json.NewEncoder(res)
	ctx := c.Request().Context()
	f.Limit = runtime.MaxAuditPage
	for {
		rows, err := h.auditor.ListAudit(ctx, f)
		if err != nil {
			// The status is sent: end the body short, and log why.
			h.log.ErrorContext(ctx, "audit export cut short", "request_id", requestID(c), "error", err)
			return nil
		}
		for _, r := range rows {
			e := newAuditExportRow(r)
			if format == "csv" {
				_ = w.Write(e.csv())
				continue
			}
			if err := enc.Encode(e); err != nil {
				return nil
			}
		}
		w.Flush()
		if len(rows) < f.Limit || w.Error() != nil {
			return nil
		}
		f.Before = rows[len(rows)-1].UID
	}
}

// auditExportRow is one exported row, its fields in auditExportFields order: the time in
// RFC 3339 (UTC), an empty actor, address or run as null.
type auditExportRow struct {
	ID       int64   `json:"id"`
	Time     string  `json:"time"`
	Actor    *string `json:"actor"`
	ActorUID int64   `json:"actor_uid"`
	IP       *string `json:"ip"`
	Action   string  `json:"action"`
	Run      *string `json:"run"`
	Outcome  string  `json:"outcome"`
	Reason   string  `json:"reason"`
	ChainSeq int64   `json:"chain_seq"`
}

func newAuditExportRow(r runtime.AuditEntry) auditExportRow {
	orNull := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return auditExportRow{ID: r.UID, Time: time.Unix(r.Time, 0).UTC().Format(time.RFC3339), Actor: orNull(r.ActorName),
		ActorUID: r.ActorUID, IP: orNull(r.IP), Action: r.Action, Run: orNull(r.RunUUID), Outcome: r.Outcome, Reason: r.Reason,
		ChainSeq: r.ChainSeq}
}

// csv is e as CSV cells (null as empty).
func (e auditExportRow) csv() []string {
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return []string{strconv.FormatInt(e.ID, 10), e.Time, deref(e.Actor), strconv.FormatInt(e.ActorUID, 10), deref(e.IP),
		e.Action, deref(e.Run), e.Outcome, e.Reason, strconv.FormatInt(e.ChainSeq, 10)}
}

// parseAuditQuery reads the audit trail's filters: the filter for the store and the filters
// as typed, for the form and the links. A date that does not parse is 400.
func parseAuditQuery(q url.Values) (runtime.AuditFilter, views.AuditFilters, error) {
	shown := views.AuditFilters{Actor: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")),
		Run: strings.TrimSpace(q.Get("run")), Outcome: strings.TrimSpace(q.Get("outcome")), Since: q.Get("since"), Until: q.Get("until")}
	f := runtime.AuditFilter{Actor: shown.Actor, Action: shown.Action, RunUUID: shown.Run, Outcome: shown.Outcome}
	for _, d := range []struct {
		text string
		into *int64
		add  time.Duration
	}{{shown.Since, &f.Since, 0}, {shown.Until, &f.Until, 24 * time.Hour}} {
		if d.text == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, d.text)
		if err != nil {
			return f, shown, badQuery("A date must be written as YYYY-MM-DD.")
		}
		*d.into = t.Add(d.add).Unix()
	}
	return f, shown, nil
}

// auditURL is path with the filters that are set and the extra name, value pairs.
func auditURL(path string, f views.AuditFilters, extra ...string) string {
	v := url.Values{}
	for _, p := range [][2]string{{"actor", f.Actor}, {"action", f.Action}, {"run", f.Run}, {"outcome", f.Outcome}, {"since", f.Since}, {"until", f.Until}} {
		if p[1] != "" {
			v.Set(p[0], p[1])
		}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] != "" {
			v.Set(extra[i], extra[i+1])
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// perParam is per as a query value, "" for the default.
func perParam(per int) string {
	if per == defaultPerPage {
		return ""
	}
	return strconv.Itoa(per)
}
