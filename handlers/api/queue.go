package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime/queue"
)

// QueueHealth reads the queue's health (*db.Store): as of now (unix seconds); the API never
// asks for the per-person figures (people false).
type QueueHealth interface {
	QueueHealth(ctx context.Context, now int64, people bool) (queue.Health, error)
}

// queueJSON is GET /queue: the figures as of AsOf, one entry per configuration and tool (the
// desk first, configuration "" and tool ""; then each configuration, tool "", before its
// tools). Percentiles are approximate: the fixed bucket (BucketBounds) the value falls in.
type queueJSON struct {
	AsOf         int64          `json:"as_of"`
	Approximate  bool           `json:"percentiles_approximate"`
	BucketBounds []int64        `json:"bucket_bounds_seconds"`
	Rows         []queueRowJSON `json:"rows"`
}

// queueRowJSON is one configuration and tool's figures.
type queueRowJSON struct {
	Configuration string            `json:"configuration"`
	Tool          string            `json:"tool"`
	Waiting       queueWaitingJSON  `json:"waiting"`
	Expiring      int64             `json:"expiring_within_1h"`
	Escalated     int64             `json:"escalated"`
	Failed        int64             `json:"failed_notifications_7d"`
	Decisions     queueDecisionJSON `json:"decisions"`
}

// queueWaitingJSON are the runs waiting now; OldestSince is null when none waits.
type queueWaitingJSON struct {
	Approval    int64           `json:"approval"`
	Input       int64           `json:"input"`
	OldestSince *int64          `json:"oldest_since"`
	AgeP50      *percentileJSON `json:"age_p50"`
	AgeP90      *percentileJSON `json:"age_p90"`
}

// queueDecisionJSON are the decisions of the last 24 h and 7 d, and per decider class
// (person, rule, service, expiry) their counts and times to decision.
type queueDecisionJSON struct {
	Day  int64                     `json:"last_24h"`
	Week int64                     `json:"last_7d"`
	By   map[string]queueClassJSON `json:"by"`
}

// queueClassJSON is one decider class's decisions; the percentiles are over the last 7 d's
// decisions whose pause start is known (null when there are none).
type queueClassJSON struct {
	Day  int64           `json:"last_24h"`
	Week int64           `json:"last_7d"`
	P50  *percentileJSON `json:"time_to_decision_p50"`
	P90  *percentileJSON `json:"time_to_decision_p90"`
}

// percentileJSON is the bucket a percentile falls in: at least AtLeast seconds and below
// Below (omitted for the last bucket, 7 d and more).
type percentileJSON struct {
	AtLeast int64  `json:"at_least_seconds"`
	Below   *int64 `json:"below_seconds,omitempty"`
}

// queueHealth is GET /queue: the queue's health as the /queue page shows it, without the
// per-person figures. 404 without Config.Queue; a store failure is 503 unavailable.
func (a *API) queueHealth(c echo.Context) error {
	if a.queue == nil {
		return apiError(http.StatusNotFound, "not_found", "there is nothing at this address")
	}
	h, err := a.queue.QueueHealth(c.Request().Context(), a.now().Unix(), false)
	if err != nil {
		return unavailable(err)
	}
	out := queueJSON{AsOf: h.Now, Approximate: true, BucketBounds: queue.Bounds(), Rows: make([]queueRowJSON, 0, len(h.Rows))}
	for _, f := range h.Rows {
		row := queueRowJSON{Configuration: f.Configuration, Tool: f.Tool,
			Waiting: queueWaitingJSON{Approval: f.WaitingApproval, Input: f.WaitingInput,
				AgeP50: percentile(f.Ages, 0.5), AgeP90: percentile(f.Ages, 0.9)},
			Expiring: f.ExpiringSoon, Escalated: f.Escalated, Failed: f.FailedNotifications,
			Decisions: queueDecisionJSON{Day: f.Decisions(true), Week: f.Decisions(false), By: map[string]queueClassJSON{}}}
		if f.OldestSince > 0 {
			row.Waiting.OldestSince = &f.OldestSince
		}
		for class := range queue.Classes {
			d := f.Decided[class]
			row.Decisions.By[class.String()] = queueClassJSON{Day: d.Day, Week: d.Week,
				P50: percentile(d.Times, 0.5), P90: percentile(d.Times, 0.9)}
		}
		out.Rows = append(out.Rows, row)
	}
	return c.JSON(http.StatusOK, out)
}

// percentile is h's q-quantile as its bucket, nil when h counted nothing.
func percentile(h queue.Histogram, q float64) *percentileJSON {
	bound, over, ok := h.Quantile(q)
	if !ok {
		return nil
	}
	p := &percentileJSON{AtLeast: queue.LowerBound(bound, over)}
	if !over {
		p.Below = &bound
	}
	return p
}

// now is the clock of the queue's figures.
func (a *API) now() time.Time { return a.clock() }
