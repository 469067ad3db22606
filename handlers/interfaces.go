package handlers

import (
	"context"
	"net/url"
	"time"

	"runsdesk/runtime"
)

// Runtime is the part of *engine.Runtime the handlers call. Every method but
// DisplayConfigurations takes the actor from h.actor(c) and returns *runtime.Error for
// anything the caller did wrong.
type Runtime interface {
	Start(ctx context.Context, actor runtime.Actor, configuration, prompt string) (runtime.Run, error)
	Approve(ctx context.Context, actor runtime.Actor, uuid string, d runtime.ApprovalDecision) (runtime.Outcome, error)
	RequestChanges(ctx context.Context, actor runtime.Actor, uuid string, c runtime.ChangeRequest) (runtime.Outcome, error)
	// EditCall is one pending call as "Edit and approve" shows it, and with a posted form the
	// checked edit (its patch and digest); it decides nothing.
	EditCall(ctx context.Context, actor runtime.Actor, uuid, callID, turnDigest string, form url.Values) (runtime.EditView, error)
	SubmitInput(ctx context.Context, actor runtime.Actor, uuid string, s runtime.InputSubmission) (runtime.Outcome, error)
	AnswerElicitation(ctx context.Context, actor runtime.Actor, uuid string, d runtime.ElicitationDecision) (runtime.Outcome, error)
	Cancel(ctx context.Context, actor runtime.Actor, uuid string) (runtime.Run, error)
	Assign(ctx context.Context, actor runtime.Actor, uuid string, a runtime.Assignment) (runtime.Run, error)
	Comment(ctx context.Context, actor runtime.Actor, uuid string, c runtime.NewComment) (runtime.Comment, error)
	Get(ctx context.Context, actor runtime.Actor, uuid string) (runtime.RunView, error)
	// Timeline is the history of a run the handler read through Get or a refusal's View,
	// without reading the run again.
	Timeline(ctx context.Context, actor runtime.Actor, run runtime.Run) (runtime.Timeline, error)
	// Answer is what actor is shown of the output of a run the handler read through Get.
	Answer(ctx context.Context, actor runtime.Actor, run runtime.Run) (runtime.Answer, error)
	// Transcript is what actor is shown of what run, read by Get, said.
	Transcript(ctx context.Context, actor runtime.Actor, run runtime.Run) (runtime.Transcript, error)
	Inbox(ctx context.Context, actor runtime.Actor, q runtime.WaitingQuery, configurations []runtime.Configuration) ([]runtime.RunView, error)
	Counts(ctx context.Context, actor runtime.Actor, q runtime.WaitingQuery) (runtime.WaitingCounts, error)
	Recent(ctx context.Context, actor runtime.Actor, q runtime.RecentQuery) ([]runtime.Run, error)
	// DisplayConfigurations is the catalog's configurations as pages show them, read at most
	// 2 s ago and shared by every request; a store failure is the catalog's error.
	DisplayConfigurations(ctx context.Context) ([]runtime.Configuration, error)
}

// Accounts signs people in and re-checks their sessions (*db.Accounts). Errors that wrap
// runtime.ErrNotFound mean "not accepted" (bad credentials, disabled or deleted user); any
// other error is a store failure and fails the request closed.
type Accounts interface {
	// Authenticate returns the person's actor and session epoch for a correct username and
	// password, taking the same time for unknown usernames.
	Authenticate(ctx context.Context, username, password string) (runtime.Actor, int64, error)
	// SessionActor returns the current actor and session epoch of user uid.
	SessionActor(ctx context.Context, uid int64) (runtime.Actor, int64, error)
	// ChangePassword verifies current, sets next and returns the new session epoch (every
	// other session of the user ends). A policy violation is an error with a Reason shown to
	// the person (see passwordPolicyReason).
	ChangePassword(ctx context.Context, uid int64, current, next string) (int64, error)
	// SetTimeZone stores the time zone name (checked by the caller; "" = UTC) user uid chose
	// for pages.
	SetTimeZone(ctx context.Context, uid int64, name string) error
}

// SessionIndex keeps runsdesk's index of signed-in sessions by person (*db.SessionIndex), each
// row found by the random id its session's data holds. Errors wrapping runtime.ErrNotFound mean
// "no such row" (Find) or "no open session of that person" (End); any other error is a store
// failure.
type SessionIndex interface {
	// Start records a signed-in session.
	Start(ctx context.Context, s runtime.Session) error
	// Find returns the row of session id, ended or not.
	Find(ctx context.Context, id string) (runtime.Session, error)
	// Touch records a request of open session id at seen from ip, keeping it until expires;
	// a row seen at or after notBefore is left as it is.
	Touch(ctx context.Context, id string, seen, notBefore int64, ip string, expires int64) error
	// List returns user's open sessions of epoch not expired at now, the most recently seen
	// first.
	List(ctx context.Context, user, epoch, now int64) ([]runtime.Session, error)
	// End signs out user's open session uid at at, asked by user's session keep; ErrNotFound
	// when uid is not another open session of user's or keep is no longer open.
	End(ctx context.Context, user int64, keep string, uid, at int64) error
	// EndOthers signs out every open session of user but keep at at and returns how many;
	// ErrNotFound when keep is no longer open. Sessions doing it at once take turns.
	EndOthers(ctx context.Context, user int64, keep string, at int64) (int64, error)
	// Forget removes the row of session id ("" or an unknown id: nothing to do).
	Forget(ctx context.Context, id string) error
}

// Auditor appends to the audit trail and reads it (*db.Audit). Handlers append through
// h.audit; ListAudit is one keyset page of the rows a filter selects, newest first.
type Auditor interface {
	Record(ctx context.Context, actor runtime.Actor, ip, action, runUUID, outcome, reason string) error
	ListAudit(ctx context.Context, f runtime.AuditFilter) ([]runtime.AuditEntry, error)
}

// LoginThrottle limits failed password checks (sign-in, current password) and sign-in codes
// per account and per client address (*db.LoginThrottle).
type LoginThrottle interface {
	// Account returns the key of the account a sign-in as username counts against: the user
	// once found (any spelling of the name), else the canonical name.
	Account(ctx context.Context, username string) (string, error)
	// UserAccount returns the key of user uid (the same key Account returns for their name).
	UserAccount(uid int64) string
	// CodeAccount returns the key of user uid's sign-in codes, counted apart from their
	// password's.
	CodeAccount(uid int64) string
	// Blocked returns how long the attempt must wait; 0 means it may proceed.
	Blocked(ctx context.Context, account, ip string, now time.Time) (time.Duration, error)
	// Fail records a failed attempt.
	Fail(ctx context.Context, account, ip string, now time.Time) error
	// Succeed forgets the account's failures after a successful check.
	Succeed(ctx context.Context, account string) error
}

// Catalog lists the configurations runs are started from (*db.Store), read afresh: a submitted
// start form is checked against them. Pages that only show configurations (the inbox filters,
// the start form) take Runtime.DisplayConfigurations instead. A store failure is returned as
// an error.
type Catalog interface {
	Configurations(ctx context.Context) ([]runtime.Configuration, error)
}

// Drafts keeps the half-filled input forms people saved (*db.Store): one per person and run,
// removed by the store when the pause ends (submit, cancel, expiry).
type Drafts interface {
	// SaveDraft stores d, replacing the person's earlier draft of the run; runtime.ErrGuard
	// when the run no longer waits for input in the pause d.SuspendedAt names.
	SaveDraft(ctx context.Context, d runtime.Draft) error
	// LoadDraft returns user's draft of run for the pause digest; runtime.ErrNotFound when
	// there is none.
	LoadDraft(ctx context.Context, run, user int64, digest string) (runtime.Draft, error)
}

// Directory names the people runs and decisions refer to (*db.Accounts).
type Directory interface {
	// Usernames returns the usernames of those uids that belong to a user (deleted ones
	// included: history keeps its names); other uids are absent from the map.
	Usernames(ctx context.Context, uids []int64) (map[int64]string, error)
	// Deciders returns the usernames of the enabled admins and reviewers, in order.
	Deciders(ctx context.Context) ([]string, error)
	// UserUID returns the uid of the undeleted person named username, or runtime.ErrNotFound.
	UserUID(ctx context.Context, username string) (int64, error)
}

// Presence records who has a waiting run's page open (*db.Store): Seen marks user on run at
// now and returns the others seen at or after since.
type Presence interface {
	Seen(ctx context.Context, run, user, now, since int64) ([]int64, error)
}

// Notifications lists the notifications of a run's page (*db.Store), oldest first. A store
// failure is returned as an error.
type Notifications interface {
	RunNotifications(ctx context.Context, runUID int64, limit int) ([]runtime.Notification, error)
}
