package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
)

// countingCatalog counts the configuration lists read through it and fails them while
// failing is set.
type countingCatalog struct {
	runtime.Catalog
	reads   atomic.Int32
	failing atomic.Bool
}

func (c *countingCatalog) Configurations(ctx context.Context) ([]runtime.Configuration, error) {
	c.reads.Add(1)
	if c.failing.Load() {
		return nil, errors.New("catalog down")
	}
	return c.Catalog.Configurations(ctx)
}

// secondsClock is a settable clock.
type secondsClock struct{ t atomic.Int64 }

func (c *secondsClock) Now() time.Time          { return time.Unix(c.t.Load(), 0) }
func (c *secondsClock) Advance(d time.Duration) { c.t.Add(int64(d / time.Second)) }

// TestPagesShowTheRememberedConfigurations: GET /runs and GET /runs/new read the catalog's
// configurations through the runtime at most once per 2 s; a configuration added meanwhile
// shows 2 s later, but a start form submitted for it starts a run at once. A failed read is
// a 503 and is not remembered.
func TestPagesShowTheRememberedConfigurations(t *testing.T) {
	t.Parallel()
	cat := &countingCatalog{}
	clk := &secondsClock{}
	clk.t.Store(time.Now().Unix())
	app := newTestApp(t, appOptions{
		configurations: []runtime.Configuration{deskConfiguration("plain", "Plain", false)},
		extra: func(h *Handlers, _ *echo.Echo) {
			store := h.catalog.(*db.Store)
			cat.Catalog = store
			rt := engine.New(engine.Config{Store: store, Catalog: cat, Now: clk.Now, Lease: time.Minute})
			t.Cleanup(rt.Close)
			h.rt = rt
		},
	})
	c := app.login(runtime.RoleReviewer)
	get := func(path string, status int, reads int32) response {
		t.Helper()
		res := c.get(path)
		if res.status != status {
			t.Fatalf("GET %s: %d, want %d", path, res.status, status)
		}
		if got := cat.reads.Load(); got != reads {
			t.Fatalf("GET %s: %d configuration reads so far, want %d", path, got, reads)
		}
		return res
	}
	offered := func(res response) string {
		return strings.Join(res.doc(t).Find(`#run-configuration option`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") }), ",")
	}
	get("/runs", http.StatusOK, 1)
	get("/runs?kind=approval", http.StatusOK, 1)
	later := runtime.Configuration{Identifier: "later", Name: "Later", MaxIterations: 5,
		Provider: model.Settings{Kind: "scripted", Script: []model.Turn{{Content: "done"}}}}
	if _, err := app.store.UpsertConfiguration(context.Background(), later); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if got := offered(get("/runs/new", http.StatusOK, 1)); strings.Contains(got, "later") || !strings.Contains(got, "plain") {
		t.Errorf("start form 1 s after adding a configuration offers %q; want the remembered list", got)
	}
	res := c.postForm("/runs", url.Values{"_csrf": {c.token()}, "configuration": {"later"}, "prompt": {"hello"}})
	if res.status != http.StatusSeeOther || !strings.HasPrefix(res.header.Get("Location"), "/runs/") {
		t.Fatalf("starting a run of the configuration just added: %d Location %q, want 303 to the run", res.status, res.header.Get("Location"))
	}
	clk.Advance(time.Second)
	if got := offered(get("/runs/new", http.StatusOK, 2)); !strings.Contains(got, "later") {
		t.Errorf("start form 2 s after adding a configuration offers %q", got)
	}

	clk.Advance(2 * time.Second)
	cat.failing.Store(true)
	get("/runs", http.StatusServiceUnavailable, 3)
	cat.failing.Store(false)
	get("/runs", http.StatusOK, 4)
	get("/runs", http.StatusOK, 4)
}
