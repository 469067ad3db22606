package engine

import "time"

// displayFresh is how long what pages only show is remembered: the inbox's waiting counts
// (Counts) and the catalog as pages show it (DisplayConfigurations, the pauses' tools). A
// value read at least this long ago, or "later" than now after the clock went back, is read
// again.
const displayFresh = 2 * time.Second
