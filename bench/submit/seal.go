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
	for _, column := range db.SealedColumns() {
		b, err := store.ResealAll(ctx, column, 200, true, nil)
		if err != nil {
			return nil, fmt.Errorf("seal desk: %w", err)
		}
		sealed += b.Resealed
	}
	fmt.Printf("# sealed: %d stored values sealed with AES-256-GCM in %s\n", sealed, time.Since(start).Round(time.Millisecond))
	return keys, nil
}
