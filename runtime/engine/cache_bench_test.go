package engine

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// benchStore answers CountWaiting without a database.
type benchStore struct{ runtime.Store }

func (benchStore) CountWaiting(context.Context, runtime.WaitingQuery) (runtime.WaitingCounts, error) {
	return runtime.WaitingCounts{Approval: 3, Input: 1}, nil
}

// benchCatalog answers the catalog's list reads without a database.
type benchCatalog struct{ runtime.Catalog }

func (benchCatalog) Configurations(context.Context) ([]runtime.Configuration, error) {
	return []runtime.Configuration{{UID: 1, Identifier: "cfg"}}, nil
}

func (benchCatalog) ToolDefinitions(context.Context) ([]tool.Definition, error) { return nil, nil }

func benchRuntime() *Runtime {
	at := time.Unix(1_800_000_000, 0)
	return New(Config{Store: benchStore{}, Catalog: benchCatalog{}, Now: func() time.Time { return at }})
}

// The hot lookups of the inbox: each benchmark measures a hit of one cache.

// BenchmarkPauseMemoHit reads a page of 25 remembered states, as an inbox page does.
func BenchmarkPauseMemoHit(b *testing.B) {
	m := newPauseMemo()
	states := make([]string, 25)
	for i := range states {
		states[i] = `{"messages":[{"role":"user","content":"` + strings.Repeat("please refund order ", 40) + `"}],` +
			`"pendingCalls":[{"id":"c` + strconv.Itoa(i) + `","type":"function","function":{"name":"send_mail","arguments":{"to":"a"}}}]}`
		m.read(strings.Clone(states[i]))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if m.read(states[i%len(states)]).err != nil {
			b.Fatal("corrupt")
		}
	}
}

func BenchmarkCountsHit(b *testing.B) {
	r, ctx := benchRuntime(), context.Background()
	actor := runtime.Actor{UserUID: 1, Name: "ada", Role: runtime.RoleAdmin}
	q := runtime.WaitingQuery{Tool: "send_mail", Search: "refund", Limit: 26}
	if _, err := r.Counts(ctx, actor, q); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if c, err := r.Counts(ctx, actor, q); err != nil || c.Approval != 3 {
			b.Fatal(c, err)
		}
	}
}

func BenchmarkDisplayConfigurationsHit(b *testing.B) {
	r, ctx := benchRuntime(), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if cfgs, err := r.DisplayConfigurations(ctx); err != nil || len(cfgs) != 1 {
			b.Fatal(cfgs, err)
		}
	}
}

func BenchmarkDisplayToolsetHit(b *testing.B) {
	r, ctx := benchRuntime(), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.displayToolset(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToolsetHit(b *testing.B) {
	r, ctx := benchRuntime(), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.toolset(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPauseMemoMiss is a page of distinct states, each decoded once: the memo's cost
// when it cannot help.
func BenchmarkPauseMemoMiss(b *testing.B) {
	m := newPauseMemo()
	states := make([]string, 4*pausesRemembered)
	for i := range states {
		states[i] = `{"messages":[],"pendingCalls":[{"id":"c` + strconv.Itoa(i) + `","type":"function","function":{"name":"send_mail","arguments":{}}}]}`
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.read(states[i%len(states)])
	}
}
