package runtime

import (
	"context"

	"runsdesk/runtime/tool"
)

// AppliedNotifications bounds how many of the latest sent, and of the latest given-up,
// notifications AppliedDesk holds.
const AppliedNotifications = 1000

// AppliedDesk is what `apply -f` stored, read back: the configurations and the data-defined
// tools in the order they were first applied, every standing approval by name (revoked ones
// too), and the latest notifications sent (Sent) and given up (Failed), newest first, at
// most AppliedNotifications each, which tell when each notify rule last delivered.
type AppliedDesk struct {
	Configurations    []Configuration
	Tools             []tool.Definition
	StandingApprovals []StandingApproval
	Sent, Failed      []Notification
}

// AppliedReads reads back what `apply -f` stored (*db.Store), for the admin's view of it and
// its download as an apply file.
type AppliedReads interface {
	AppliedDesk(ctx context.Context) (AppliedDesk, error)
}
