package runtime

import "time"

// displayFresh is how long what pages only show is remembered: the inbox's waiting counts
// (Counts) and the catalog as pages show it (DisplayConfigurations, the pauses' tools).
const displayFresh = 2 * time.Second

// fresh reports whether a value read at at may still be shown at now: it is less than
// displayFresh old (a clock that went back makes it stale).
func fresh(at, now time.Time) bool {
	age := now.Sub(at)
	return age >= 0 && age < displayFresh
}
