package runtime

import "net/url"

// Draft is one person's saved, unsubmitted values of a waiting run's input form, kept exactly
// as typed (valid or not). It is keyed by run (uid) and person (be_users uid) and belongs to
// the pause whose digest it carries; it never reaches the model, events, audit rows or logs.
// SuspendedAt is the pause as the saver read it: a save after that pause ended is refused.
type Draft struct {
	Run         int64
	User        int64
	Digest      string
	Values      url.Values
	SuspendedAt int64
	UpdatedAt   int64
}
