package db

import (
	"context"
	"fmt"
	"strings"
)

// maxUsernameLookup bounds how many uids one Usernames query asks for; longer lists are split.
const maxUsernameLookup = 200

// Usernames returns the usernames of the uids that belong to a be_users row, deleted users
// included (a run's history keeps naming who acted). Uids that are not positive or match no row
// are absent from the map. One query per 200 distinct uids; a store failure is an error.
func (a *Accounts) Usernames(ctx context.Context, uids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	seen := map[int64]bool{}
	var want []any
	for _, uid := range uids {
		if uid > 0 && !seen[uid] {
			seen[uid] = true
			want = append(want, uid)
		}
	}
	for len(want) > 0 {
		n := min(len(want), maxUsernameLookup)
		if err := a.usernames(ctx, want[:n], out); err != nil {
			return nil, err
		}
		want = want[n:]
	}
	return out, nil
}

func (a *Accounts) usernames(ctx context.Context, uids []any, out map[int64]string) error {
	query := `SELECT uid, username FROM be_users WHERE uid IN (?` + strings.Repeat(`,?`, len(uids)-1) + `)`
	rows, err := a.db.QueryContext(ctx, query, uids...)
	if err != nil {
		return fmt.Errorf("db: usernames: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var uid int64
		var name string
		if err := rows.Scan(&uid, &name); err != nil {
			return fmt.Errorf("db: usernames: %w", err)
		}
		out[uid] = name
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: usernames: %w", err)
	}
	return nil
}
