package db

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

// TestSecretIsSharedByEveryCaller starts many callers at once (as processes starting together
// would): all get the same key, later calls too, and another name is another key.
func TestSecretIsSharedByEveryCaller(t *testing.T) {
	pool := accountsPool(t)
	ctx := context.Background()
	keys := make([][]byte, 16)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := Secret(ctx, pool, "login_form")
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	again, err := Secret(ctx, pool, "login_form")
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != secretLen {
		t.Fatalf("key of %d bytes, want %d", len(again), secretLen)
	}
	for i, k := range keys {
		if !bytes.Equal(k, again) {
			t.Errorf("caller %d got another key", i)
		}
	}
	other, err := Secret(ctx, pool, "something_else")
	if err != nil || bytes.Equal(other, again) {
		t.Errorf("another name: %x (%v), want another key", other, err)
	}
	if _, err := pool.Exec(`UPDATE tx_runsdesk_secret SET secret = 'not hex' WHERE name = 'login_form'`); err != nil {
		t.Fatal(err)
	}
	if _, err := Secret(ctx, pool, "login_form"); err == nil {
		t.Error("a corrupt stored key was accepted")
	}
}
