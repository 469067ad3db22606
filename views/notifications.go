package views

import "time"

// NotificationRow is one notification of a run as its page lists it. At is when it is next
// tried (pending), when its claim lapses (sending) or when it was sent; zero when none.
type NotificationRow struct {
	Event     string
	Channel   string
	State     string
	Attempts  int
	At        time.Time
	LastError string
}

// NotificationStateLabel is the words for a notification state.
func NotificationStateLabel(state string) string {
	switch state {
	case "pending":
		return "Pending"
	case "sending":
		return "Sending"
	case "sent":
		return "Sent"
	case "failed":
		return "Failed"
	case "blocked":
		return "Blocked"
	}
	return state
}

// notificationBadge is the badge modifier of a notification state.
func notificationBadge(state string) string {
	switch state {
	case "sent":
		return "badge badge--success"
	case "failed":
		return "badge badge--danger"
	case "blocked":
		return "badge badge--attention"
	}
	return "badge badge--neutral"
}
