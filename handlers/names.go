package handlers

import (
	"context"
	"fmt"
	"strings"
)

// nameBook resolves user uids to the names the pages show.
type nameBook map[int64]string

// names looks up the usernames of uids. A lookup failure is logged and leaves the names
// unresolved ("user #7"): names are decoration, not worth failing a page for.
func (h *Handlers) names(ctx context.Context, uids ...int64) nameBook {
	if h.people == nil {
		return nameBook{}
	}
	m, err := h.people.Usernames(ctx, uids)
	if err != nil {
		h.log.WarnContext(ctx, "usernames not resolved", "error", err)
		return nameBook{}
	}
	return m
}

// actor returns the name of who acted: "service account <name>" when service names one, else
// uid's name (of).
func (b nameBook) actor(uid int64, service string) string {
	if service != "" {
		return "service account " + service
	}
	return b.of(uid)
}

// of returns uid's name: a username, "a service account" for uid 0, else "user #uid".
func (b nameBook) of(uid int64) string {
	if uid <= 0 {
		return "a service account"
	}
	if n, ok := b[uid]; ok {
		return n
	}
	return fmt.Sprintf("user #%d", uid)
}

// list names uids, joined by ", ".
func (b nameBook) list(uids []int64) string {
	out := make([]string, len(uids))
	for i, uid := range uids {
		out[i] = b.of(uid)
	}
	return strings.Join(out, ", ")
}
