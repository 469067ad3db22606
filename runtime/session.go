package runtime

// Session is one signed-in session of a person as runsdesk's session index keeps it. Times
// are unix seconds.
type Session struct {
	// UID is the index row's number, which pages name a session by; ID is the random id the
	// session's own data holds (never shown, never the session token).
	UID int64
	ID  string
	// UserUID is the person; Epoch their session epoch at sign-in.
	UserUID int64
	Epoch   int64
	// Created is the sign-in, LastSeen the last request written (at most once a minute),
	// Expires when the session ends unless used again, Ended when it was signed out from
	// another session (0: open).
	Created, LastSeen, Expires, Ended int64
	// IP is the client address of the last request written; UserAgent the browser's at sign-in.
	IP, UserAgent string
}
