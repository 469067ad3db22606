package db

import (
	"context"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
)

func TestAuditRecord(t *testing.T) {
	pool := accountsPool(t)
	now := time.Date(2027, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	a := NewAudit(pool, func() time.Time { return now })
	ctx := context.Background()
	actor := runtime.Actor{UserUID: 7, Name: "alice", Role: runtime.RoleReviewer}

	if err := a.Record(ctx, actor, "192.0.2.1", "login", "", "success", ""); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(ctx, runtime.Actor{Name: strings.Repeat("n", 300)}, "2001:db8::1", "access_denied",
		"0a6e2b58-1234-4abc-9def-000000000000", "denied", "line1\nline2\x00"+strings.Repeat("r", 2000)); err != nil {
		t.Fatal(err)
	}
	rows, err := a.RecentAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(rows))
	}
	first, second := rows[1], rows[0]
	if first.Time != now.Unix() || first.ActorUID != 7 || first.ActorName != "alice" || first.IP != "192.0.2.1" ||
		first.Action != "login" || first.Outcome != "success" {
		t.Errorf("first row = %+v", first)
	}
	if len([]rune(second.ActorName)) != auditNameLen || len([]rune(second.Reason)) != auditReasonLen ||
		strings.ContainsAny(second.Reason, "\n\x00") || second.RunUUID == "" {
		t.Errorf("second row not clipped and cleaned: name %d runes, reason %q…", len([]rune(second.ActorName)), second.Reason[:20])
	}
}
