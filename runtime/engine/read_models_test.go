package engine_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
)

// TestInboxReadsWhatACardShows: the inbox's pause of a run equals the run page's (Get) in
// everything a card shows; only an approval the viewer may decide carries its digest there,
// the same as Get's.
func TestInboxReadsWhatACardShows(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("lookup", `{"q":1}`), call("notify", `{"to":"ops"}`))})
	approval := e.startAndRun(admin)
	e.cfg.Provider.Script = []model.Turn{turn(call("ask_city", `{"hint":"north"}`))}
	e.saveConfig()
	input := e.startAndRun(admin)
	list, err := e.rt.Inbox(e.ctx, admin, runtime.WaitingQuery{Limit: 10}, nil)
	if err != nil || len(list) != 2 {
		t.Fatalf("inbox = %d runs, %v", len(list), err)
	}
	for _, v := range list {
		full := e.view(v.Run.UUID)
		if v.Pause == nil || full.Pause == nil || v.Unreadable != "" {
			t.Fatalf("%s: inbox %+v, run page %+v", v.Run.UUID, v, full)
		}
		wantDigest := ""
		if v.Run.UUID == approval.UUID {
			wantDigest = full.Pause.Digest
		}
		if v.Pause.Digest != wantDigest || full.Pause.Digest == "" {
			t.Errorf("%s: inbox digest %q, run page %q; want %q in the inbox", v.Run.Status, v.Pause.Digest, full.Pause.Digest, wantDigest)
		}
		card, page := *v.Pause, *full.Pause
		card.Digest, page.Digest = "", ""
		if !reflect.DeepEqual(card, page) {
			t.Errorf("%s: inbox pause %+v differs from the run page's %+v", v.Run.Status, card, page)
		}
	}
	if v := list[1]; v.Run.UUID != input.UUID || v.Pause.InputTool != "ask_city" || string(v.Pause.InputSchema) != citySchema {
		t.Errorf("input pause in the inbox: %+v", v.Pause)
	}
	readOnly, err := e.rt.Inbox(e.ctx, support, runtime.WaitingQuery{Limit: 10}, nil)
	if err != nil || len(readOnly) != 2 || readOnly[0].Pause == nil {
		t.Fatalf("support's inbox = %+v, %v", readOnly, err)
	}
	if d := readOnly[0].Pause.Digest; d != "" {
		t.Errorf("support, who may not decide, gets the approval's digest %q", d)
	}
}

// TestInboxListsEveryCorruptStateAsUnreadable: whatever makes the run page call a state
// unreadable makes the inbox list it as unreadable too (never guessed, never hidden), the
// transcript included although the inbox does not read it.
func TestInboxListsEveryCorruptStateAsUnreadable(t *testing.T) {
	const calls = `"pendingCalls":[{"id":"c1","type":"function","function":{"name":"send_mail","arguments":{}}}]`
	cases := map[string]string{
		"not json":                  `{not json`,
		"empty":                     ``,
		"transcript not a list":     `{"messages":"nope",` + calls + `}`,
		"transcript entry a number": `{"messages":[{"role":"user","content":"hi"},1],` + calls + `}`,
		"transcript entry a list":   `{"messages":[[]],` + calls + `}`,
		"transcript malformed":      `{"messages":[{"role" "user"}],` + calls + `}`,
		"no pending calls":          `{"messages":[],"pendingCalls":[]}`,
		"call without id":           `{"messages":[],"pendingCalls":[{"type":"function","function":{"name":"send_mail","arguments":{}}}]}`,
		"arguments not an object":   `{"messages":[],"pendingCalls":[{"id":"c1","type":"function","function":{"name":"send_mail","arguments":[1]}}]}`,
		"preview of no call":        `{"messages":[],` + calls + `,"callPreviews":[{"index":3,"tool":"send_mail","lines":[]}]}`,
		"negative counters":         `{"messages":[],` + calls + `,"iterations":-1}`,
		"input state on approval":   `{"messages":[],` + calls + `,"inputToolName":"ask_city","inputSchema":` + citySchema + `}`,
	}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	healthy := e.startAndRun(admin)
	for name, state := range cases {
		t.Run(name, func(t *testing.T) {
			run := e.startAndRun(admin)
			if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET suspended_state=? WHERE uuid=?", state, run.UUID); err != nil {
				t.Fatal(err)
			}
			if v := e.view(run.UUID); v.Unreadable == "" {
				t.Fatalf("the run page reads %q", state)
			}
			list, err := e.rt.Inbox(e.ctx, admin, runtime.WaitingQuery{Limit: 100}, nil)
			if err != nil {
				t.Fatal(err)
			}
			found := map[string]runtime.RunView{}
			for _, v := range list {
				found[v.Run.UUID] = v
			}
			if v, ok := found[run.UUID]; !ok || v.Unreadable == "" || v.Pause != nil {
				t.Errorf("inbox lists the corrupt run as %+v (listed %v), want unreadable", v, ok)
			}
			if v := found[healthy.UUID]; v.Pause == nil {
				t.Error("a corrupt run hid a healthy one")
			}
			if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET status='cancelled', suspended_at=0 WHERE uuid=?", run.UUID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestInboxListsAnInputRunWithAnUnusableSchemaAsUnreadable: an input pause is checked like a
// submission checks it.
func TestInboxListsAnInputRunWithAnUnusableSchemaAsUnreadable(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`))})
	run := e.startAndRun(admin)
	for _, state := range []string{
		`{"messages":[],"pendingCalls":[{"id":"c","type":"function","function":{"name":"ask_city","arguments":{}}}],"inputToolName":"ask_city","inputSchema":{}}`,
		`{"messages":[],"pendingCalls":[{"id":"c","type":"function","function":{"name":"ask_city","arguments":{}}}]}`,
	} {
		if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET suspended_state=? WHERE uuid=?", state, run.UUID); err != nil {
			t.Fatal(err)
		}
		list, err := e.rt.Inbox(e.ctx, admin, runtime.WaitingQuery{Limit: 10}, nil)
		if err != nil || len(list) != 1 || list[0].Unreadable == "" || e.view(run.UUID).Unreadable == "" {
			t.Errorf("state %s: inbox %+v (%v), want the run listed as unreadable", state, list, err)
		}
	}
}

// TestInboxTakesTheCallersConfigurations: given the catalog's configurations, the inbox reads
// none of them again (only the tool definitions, no longer remembered 2 s on) and describes
// the page as it does when it reads them itself; a configuration missing from the list offers
// no tools.
func TestInboxTakesTheCallersConfigurations(t *testing.T) {
	counter := &readCounter{}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))}, func(_ *env, c *engine.Config) {
		counter.Store, counter.Catalog = c.Store, c.Catalog
		c.Store, c.Catalog = counter, counter
	})
	e.startAndRun(admin)
	e.startAndRun(admin)
	want, err := e.rt.Inbox(e.ctx, admin, runtime.WaitingQuery{Limit: 10}, nil)
	if err != nil || len(want) != 2 {
		t.Fatalf("inbox = %d runs, %v", len(want), err)
	}
	counter.mu.Lock()
	counter.reads = 0
	counter.mu.Unlock()
	e.clock.Advance(2 * time.Second)
	got, err := e.rt.Inbox(e.ctx, admin, runtime.WaitingQuery{Limit: 10}, []runtime.Configuration{e.cfg})
	if err != nil {
		t.Fatal(err)
	}
	counter.mu.Lock()
	reads := counter.reads
	counter.mu.Unlock()
	if reads != 1 {
		t.Errorf("the inbox read %d configurations or tool lists, want 1 (the tool definitions)", reads)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with the caller's configurations the inbox is %+v, want %+v", got, want)
	}
	gone, err := e.rt.Inbox(e.ctx, admin, runtime.WaitingQuery{Limit: 10}, []runtime.Configuration{})
	if err != nil || len(gone) != 2 || gone[0].Pause == nil || gone[0].Pause.Tools["send_mail"].Offered {
		t.Errorf("without the run's configuration: %+v, %v; want send_mail not offered", gone, err)
	}
}

// TestTimelineIsTheRunsHistory: Timeline of a run read through Get is exactly its events and
// governance rows (as Events and Governance return them), and a run the actor may not read
// is RunNotFound.
func TestTimelineIsTheRunsHistory(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	if _, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: false, TurnDigest: digest}); err != nil {
		t.Fatal(err)
	}
	e.rt.Wait()
	view := e.view(run.UUID)
	tl, err := e.rt.Timeline(e.ctx, admin, view.Run)
	if err != nil {
		t.Fatal(err)
	}
	gov, err := e.rt.Governance(e.ctx, admin, run.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(gov) == 0 || !reflect.DeepEqual(tl.Governance, gov) || !reflect.DeepEqual(tl.Events, e.events(run.UUID)) {
		t.Fatalf("timeline %d events, %d rows; want %d events and the %d rows of Governance", len(tl.Events), len(tl.Governance), len(e.events(run.UUID)), len(gov))
	}
	if _, err := e.rt.Timeline(e.ctx, runtime.Actor{}, view.Run); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Fatalf("anonymous timeline: %v, want RunNotFound", err)
	}
}
