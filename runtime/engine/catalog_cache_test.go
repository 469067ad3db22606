package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// countingCatalog counts the catalog's list reads and fails them while failing is set.
type countingCatalog struct {
	runtime.Catalog
	configurations, definitions atomic.Int32
	failing                     atomic.Bool
}

var errCatalogDown = errors.New("catalog down")

func (c *countingCatalog) Configurations(ctx context.Context) ([]runtime.Configuration, error) {
	c.configurations.Add(1)
	if c.failing.Load() {
		return nil, errCatalogDown
	}
	return c.Catalog.Configurations(ctx)
}

func (c *countingCatalog) ToolDefinitions(ctx context.Context) ([]tool.Definition, error) {
	c.definitions.Add(1)
	if c.failing.Load() {
		return nil, errCatalogDown
	}
	return c.Catalog.ToolDefinitions(ctx)
}

// reads are the list reads so far: configurations, tool definitions.
func (c *countingCatalog) reads() [2]int32 {
	return [2]int32{c.configurations.Load(), c.definitions.Load()}
}

func withCountingCatalog(c *countingCatalog) envOption {
	return func(_ *env, cfg *engine.Config) {
		c.Catalog = cfg.Catalog
		cfg.Catalog = c
	}
}

// inboxPage reads the inbox as GET /runs does: the configurations as pages show them, then
// one page with them.
func (e *env) inboxPage(actor runtime.Actor) ([]runtime.RunView, error) {
	cfgs, err := e.rt.DisplayConfigurations(e.ctx)
	if err != nil {
		return nil, err
	}
	return e.rt.Inbox(e.ctx, actor, runtime.WaitingQuery{Limit: 10}, cfgs)
}

// TestInboxRemembersTheCatalogForTwoSeconds: inbox pages (and run pages) less than 2 s apart
// read the configurations and the tool definitions once between them; once 2 s have passed,
// or after the clock went back, the next page reads them again.
func TestInboxRemembersTheCatalogForTwoSeconds(t *testing.T) {
	cat := &countingCatalog{}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))}, withCountingCatalog(cat))
	run := e.startAndRun(admin)
	base := cat.reads()
	page := func(n int32, when string) {
		t.Helper()
		list, err := e.inboxPage(reviewer)
		if err != nil || len(list) != 1 || list[0].Pause == nil || !list[0].Pause.Tools["send_mail"].Offered {
			t.Fatalf("%s: inbox = %+v, %v", when, list, err)
		}
		if got, want := cat.reads(), [2]int32{base[0] + n, base[1] + n}; got != want {
			t.Fatalf("%s: catalog reads (configurations, tool definitions) = %v, want %v", when, got, want)
		}
	}
	page(1, "first page")
	page(1, "second page at once")
	e.view(run.UUID)
	e.clock.Advance(time.Second)
	page(1, "a run page and 1 s later")
	e.clock.Advance(time.Second)
	page(2, "2 s later")
	e.clock.Advance(-time.Minute)
	page(3, "after the clock went back")
}

// TestConcurrentInboxPagesShareOneCatalogRead: pages asked for at once wait for one read.
func TestConcurrentInboxPagesShareOneCatalogRead(t *testing.T) {
	cat := &countingCatalog{}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))}, withCountingCatalog(cat))
	e.startAndRun(admin)
	base := cat.reads()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			if list, err := e.inboxPage(admin); err != nil || len(list) != 1 {
				errs <- errors.Join(err, errors.New("inbox page"))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := cat.reads(), [2]int32{base[0] + 1, base[1] + 1}; got != want {
		t.Errorf("catalog reads (configurations, tool definitions) = %v, want %v", got, want)
	}
}

// TestCatalogErrorIsNotRemembered: a failed read is the error as before and the next page
// reads again at once, even within 2 s.
func TestCatalogErrorIsNotRemembered(t *testing.T) {
	cat := &countingCatalog{}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))}, withCountingCatalog(cat))
	run := e.startAndRun(admin)
	cat.failing.Store(true)
	if _, err := e.rt.DisplayConfigurations(e.ctx); !errors.Is(err, errCatalogDown) {
		t.Fatalf("configurations while the catalog is down: %v", err)
	}
	if _, err := e.rt.Inbox(e.ctx, admin, runtime.WaitingQuery{Limit: 10}, []runtime.Configuration{e.cfg}); !errors.Is(err, errCatalogDown) {
		t.Fatalf("inbox while the catalog is down: %v", err)
	}
	var re *runtime.Error
	if _, err := e.rt.Get(e.ctx, admin, run.UUID); !errors.As(err, &re) || re.Code != runtime.CodeRunStateUnavailable || !errors.Is(err, errCatalogDown) {
		t.Fatalf("run page while the catalog is down: %v", err)
	}
	base := cat.reads()
	cat.failing.Store(false)
	list, err := e.inboxPage(admin)
	if err != nil || len(list) != 1 || list[0].Pause == nil {
		t.Fatalf("inbox once the catalog is back: %+v, %v", list, err)
	}
	if got, want := cat.reads(), [2]int32{base[0] + 1, base[1] + 1}; got != want {
		t.Errorf("catalog reads (configurations, tool definitions) = %v, want %v", got, want)
	}
}

// TestDecisionsAndStartsReadTheCatalogFresh: while pages still show the catalog as read
// before a change, a decision checks the changed tool and a start finds a new configuration.
func TestDecisionsAndStartsReadTheCatalogFresh(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"content":"ok"}`))
	}))
	defer srv.Close()
	e := newEnv(t, []model.Turn{turn(call("refund", `{}`))})
	def := tool.Definition{Name: "refund", Description: "remote refund", Parameters: json.RawMessage(`{"type":"object"}`),
		Effect: tool.EffectNonIdempotentWrite, RequiresApproval: true, HTTP: tool.HTTPConfig{URL: srv.URL}}
	if _, err := e.store.UpsertTool(e.ctx, def); err != nil {
		t.Fatal(err)
	}
	e.cfg.Tools = []string{"refund"}
	e.saveConfig()
	run := e.startAndRun(admin)
	shown := func() runtime.ToolInfo {
		t.Helper()
		list, err := e.inboxPage(reviewer)
		if err != nil || len(list) != 1 || list[0].Pause == nil {
			t.Fatalf("inbox = %+v, %v", list, err)
		}
		return list[0].Pause.Tools["refund"]
	}
	if info := shown(); !info.Registered || info.AdminOnly {
		t.Fatalf("refund shown as %+v before the change", info)
	}
	def.AdminOnly = true
	if _, err := e.store.UpsertTool(e.ctx, def); err != nil {
		t.Fatal(err)
	}
	if info := shown(); info.AdminOnly {
		t.Fatalf("refund shown as %+v at once after the change; want the remembered registry", info)
	}
	_, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(run.UUID).Pause.Digest})
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeApproverNotPermitted {
		t.Fatalf("a reviewer approving a tool made admin-only: %v; want %s", err, runtime.CodeApproverNotPermitted)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)

	fresh := runtime.Configuration{Identifier: "fresh", Name: "Fresh", Provider: e.cfg.Provider, MaxIterations: 5}
	if _, err := e.store.UpsertConfiguration(e.ctx, fresh); err != nil {
		t.Fatal(err)
	}
	cfgs, err := e.rt.DisplayConfigurations(e.ctx)
	if err != nil || len(cfgs) != 1 {
		t.Fatalf("configurations shown at once after adding one: %+v, %v; want the remembered one", cfgs, err)
	}
	if _, err := e.rt.Start(e.ctx, admin, "fresh", "hello"); err != nil {
		t.Fatalf("start from a configuration added within 2 s: %v", err)
	}

	e.clock.Advance(2 * time.Second)
	if info := shown(); !info.AdminOnly {
		t.Errorf("refund shown as %+v 2 s after the change", info)
	}
	if cfgs, err := e.rt.DisplayConfigurations(e.ctx); err != nil || len(cfgs) != 2 {
		t.Errorf("configurations shown 2 s after adding one: %+v, %v", cfgs, err)
	}
}
