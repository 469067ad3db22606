package main

import (
	"context"
	"fmt"
	"time"

	"runsdesk/bench/benchenv"
	"runsdesk/db"
	"runsdesk/seal"
)

// sealDesk returns nil unless -seal; then a fresh keyring, with every seeded run's state
// sealed under it (as `runsdesk keys rotate` does), so the phases read and write envelopes.
func sealDesk(ctx context.Context, o options, desk *benchenv.Desk) (*seal.Keyring, error) {
	if !o.seal {
		return nil, nil
	}
	line, err := seal.Generate("bench")
	if err != nil {
		return nil, err
	}
	keys, err := seal.Parse(line)
	if err != nil {
		return nil, err
	}
	pool, err := db.Open(ctx, desk.DSN)
	if err != nil {
		return nil, fmt.Errorf("seal desk: %w", err)
	}
	defer pool.Close()
	store := db.New(pool, db.WithKeys(keys))
	start, sealed := time.Now(), 0
	for after := int64(0); ; {
		b, err := store.Reseal(ctx, after, 200)
		if err != nil {
			return nil, fmt.Errorf("seal desk: %w", err)
		}
		sealed += b.Resealed
		if b.Done {
			break
		}
		after = b.Next
	}
	fmt.Printf("# sealed: %d runs' state sealed with AES-256-GCM in %s\n", sealed, time.Since(start).Round(time.Millisecond))
	return keys, nil
}
