package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"time"
)

// secretLen is the length of every key Secret returns.
const secretLen = 32

// Secret returns the 32-byte key called name that every process on the database shares: the
// first caller creates it at random, every later one reads the same bytes. A store failure,
// or a stored value that is not 64 hex digits, is an error naming the key, never its value.
func Secret(ctx context.Context, sqlDB *sql.DB, name string) ([]byte, error) {
	fresh := make([]byte, secretLen)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("db: secret %s: %w", name, err)
	}
	if _, err := execRetrying(ctx, sqlDB, `INSERT IGNORE INTO tx_runsdesk_secret (name, secret, crdate) VALUES (?, ?, ?)`,
		name, hex.EncodeToString(fresh), time.Now().Unix()); err != nil {
		return nil, fmt.Errorf("db: create secret %s: %w", name, err)
	}
	var stored string
	if err := sqlDB.QueryRowContext(ctx, `SELECT secret FROM tx_runsdesk_secret WHERE name = ?`, name).Scan(&stored); err != nil {
		return nil, fmt.Errorf("db: read secret %s: %w", name, err)
	}
	key, err := hex.DecodeString(stored)
	if err != nil || len(key) != secretLen {
		return nil, fmt.Errorf("db: secret %s is not %d hex-encoded bytes", name, secretLen)
	}
	return key, nil
}
