package views

import "time"

// Recent is one page of finished runs, newest first.
type Recent struct {
	Rows     []RecentRow
	NextURL  string
	FirstURL string
	Now      time.Time
}

// RecentRow is one finished run as the recent list shows it.
type RecentRow struct {
	UUID          string
	Configuration string
	Status        string
	Reason        string
	// Expiry is what the latest expiry of one of its pauses did ("" when none expired).
	Expiry   string
	Created  time.Time
	Finished time.Time
	Tokens   int64
	Cost     float64
}
