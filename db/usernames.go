package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"runsdesk/runtime"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// maxUsernameLookup bounds how many uids one Usernames query asks for; longer lists are split.
const maxUsernameLookup = 200

// Usernames returns the usernames of the uids that belong to a be_users row, deleted users
// included (a run's history keeps naming who acted). Uids that are not positive or match no row
// are absent from the map. One query per 200 distinct uids; a store failure is an error.
func (a *Accounts) Usernames(ctx context.Context, uids []int64) (map[int64]string, error) {
	return usernamesOf(ctx, a.db, uids)
}

// Usernames is Accounts.Usernames on the store's database: the runtime names who decided.
func (s *Store) Usernames(ctx context.Context, uids []int64) (map[int64]string, error) {
	return usernamesOf(ctx, s.db, uids)
}

// usernamesOf is Usernames read from db.
func usernamesOf(ctx context.Context, db *sql.DB, uids []int64) (map[int64]string, error) {
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
		if err := usernames(ctx, db, want[:n], out); err != nil {
			return nil, err
		}
		want = want[n:]
	}
	return out, nil
}

func usernames(ctx context.Context, db *sql.DB, uids []any, out map[int64]string) error {
	query := `SELECT uid, username FROM be_users WHERE uid IN (?` + strings.Repeat(`,?`, len(uids)-1) + `)`
	rows, err := db.QueryContext(ctx, query, uids...)
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

// CanonicalUsername is the one form of a username that runsdesk stores, looks up, compares
// and throttles: s without surrounding space, NFKC-normalised and case-folded (so "ADA", " Ada "
// and fullwidth "ＡＤＡ" are all "ada"). Accents are kept: "ťhrot2" is not "throt2". Stored
// usernames are compared with it byte for byte.
func CanonicalUsername(s string) string {
	s = norm.NFKC.String(strings.TrimSpace(s))
	return norm.NFKC.String(cases.Fold().String(s))
}

// usernameSafe is what a canonical username may contain when it is created: ASCII lower-case
// letters, digits and . _ - @, so no two people's names look alike.
func usernameSafe(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || strings.ContainsRune("._-@", r)
}

// newUsername returns the canonical form of a username to be created, or a *PolicyError when
// that form is empty, longer than MaxUsernameLength or outside the safe set.
func newUsername(username string) (string, error) {
	c := CanonicalUsername(username)
	if c == "" || len(c) > MaxUsernameLength {
		return "", &PolicyError{Reason: fmt.Sprintf("The username must be 1 to %d characters long.", MaxUsernameLength)}
	}
	if strings.IndexFunc(c, func(r rune) bool { return !usernameSafe(r) }) >= 0 {
		return "", &PolicyError{Reason: "The username may contain only letters a to z, digits and . _ - @ (capitals are stored in lower case)."}
	}
	return c, nil
}

// PersonByUsername returns the undeleted person named username (compared as sign-in compares
// it) as an actor: uid, username, display name, role and whether they are disabled; an error
// wrapping runtime.ErrNotFound when there is none.
func (s *Store) PersonByUsername(ctx context.Context, username string) (runtime.Actor, error) {
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT `+userColumns+`
		FROM be_users WHERE username = ? AND deleted = 0`, CanonicalUsername(username)))
	if err != nil {
		return runtime.Actor{}, fmt.Errorf("db: person %q: %w", username, notFound(err))
	}
	return u.Actor(), nil
}

// Deciders returns the usernames of the enabled, undeleted admins and reviewers, the people a
// run may be assigned to, in order (at most 1,000).
func (a *Accounts) Deciders(ctx context.Context) ([]string, error) {
	out, err := queryAll(ctx, a.db, func(r *sql.Rows) (string, error) {
		var name string
		return name, r.Scan(&name)
	}, `SELECT username FROM be_users WHERE deleted = 0 AND disable = 0 AND role IN ('admin', 'reviewer')
		ORDER BY username LIMIT 1000`)
	if err != nil {
		return nil, fmt.Errorf("db: deciders: %w", err)
	}
	return out, nil
}

// AssignmentLoads returns how many waiting runs each of uids is assigned (a uid holding none
// is absent), read from KEY waiting_assignee.
func (s *Store) AssignmentLoads(ctx context.Context, uids []int64) (map[int64]int, error) {
	out := map[int64]int{}
	if len(uids) == 0 {
		return out, nil
	}
	args := make([]any, len(uids))
	for i, u := range uids {
		args[i] = u
	}
	rows, err := queryAll(ctx, s.db, func(r *sql.Rows) ([2]int64, error) {
		var x [2]int64
		return x, r.Scan(&x[0], &x[1])
	}, `SELECT assignee, COUNT(*) FROM tx_nrllm_agentrun FORCE INDEX (waiting_assignee)
		WHERE assignee IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(uids)), ", ")+`)
		AND status IN ('waiting_for_approval', 'waiting_for_input') GROUP BY assignee`, args...)
	if err != nil {
		return nil, fmt.Errorf("db: assignment loads: %w", err)
	}
	for _, x := range rows {
		out[x[0]] = int(x[1])
	}
	return out, nil
}

// UserUID returns the uid of the undeleted person named username (compared as sign-in
// compares it), or an error wrapping runtime.ErrNotFound.
func (a *Accounts) UserUID(ctx context.Context, username string) (int64, error) {
	var uid int64
	err := a.db.QueryRowContext(ctx, `SELECT uid FROM be_users WHERE username = ? AND deleted = 0`, CanonicalUsername(username)).Scan(&uid)
	if err != nil {
		return 0, fmt.Errorf("db: user %q: %w", username, notFound(err))
	}
	return uid, nil
}
