package db

import (
	"context"
	"reflect"
	"testing"

	"runsdesk/runtime"
)

func TestUsernames(t *testing.T) {
	a, pool := newAccounts(t)
	ctx := context.Background()
	ada := mustCreateUser(t, a, "ada", runtime.RoleAdmin)
	rita := mustCreateUser(t, a, "rita", runtime.RoleReviewer)
	gone := mustCreateUser(t, a, "gone", runtime.RoleSupport)
	if _, err := pool.ExecContext(ctx, `UPDATE be_users SET deleted = 1 WHERE uid = ?`, gone); err != nil {
		t.Fatal(err)
	}
	got, err := a.Usernames(ctx, []int64{rita, 0, -1, ada, rita, gone, 987654})
	if err != nil {
		t.Fatalf("Usernames: %v", err)
	}
	want := map[int64]string{ada: "ada", rita: "rita", gone: "gone"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Usernames = %v, want %v", got, want)
	}
	if got, err := a.Usernames(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("Usernames(nil) = %v, %v; want empty, nil", got, err)
	}
	many := make([]int64, 450)
	for i := range many {
		many[i] = int64(i + 1)
	}
	if got, err := a.Usernames(ctx, many); err != nil || len(got) != 3 {
		t.Errorf("Usernames(450 uids) = %d names, %v; want 3, nil", len(got), err)
	}
	pool.Close()
	if _, err := a.Usernames(ctx, []int64{ada}); err == nil {
		t.Error("Usernames on a closed pool: nil error, want the store failure")
	}
}
