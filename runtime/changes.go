package runtime

// RunChange is one run as the live desk's feed reads it after a change: the fields the read
// rule (MayAct) looks at, its status, and Stamp, which changes whenever its status, pause or
// assignee does (a change of anything else leaves it as it was). At is when the row last
// changed, in unix microseconds: the feed's cursor.
type RunChange struct {
	Run   Run
	Stamp string
	At    int64
}
