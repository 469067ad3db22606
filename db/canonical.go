package db

import (
	"fmt"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// CanonicalUsername is the one form of a username that runsdesk stores, looks up, compares
// and throttles: s without surrounding space, NFKC-normalised and case-folded (so "ADA", " Ada "
// and fullwidth "ＡＤＡ" are all "ada"). Accents are kept: "ťhrot2" is not "throt2". Stored
// usernames are compared with it byte for byte.
func CanonicalUsername(s string) string {
	s = norm.NFKC.String(strings.TrimSpace(s))
	return norm.NFKC.String(cases.Fold().String(s))
}

// usernameSafe is what a canonical username may contain when it is created: ASCII lower-case
// letters, digits and . _ - @, so no two people's names look alike.
func usernameSafe(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || strings.ContainsRune("._-@", r)
}

// newUsername returns the canonical form of a username to be created, or a *PolicyError when
// that form is empty, longer than MaxUsernameLength or outside the safe set.
func newUsername(username string) (string, error) {
	c := CanonicalUsername(username)
	if c == "" || len(c) > MaxUsernameLength {
		return "", &PolicyError{Reason: fmt.Sprintf("The username must be 1 to %d characters long.", MaxUsernameLength)}
	}
	if strings.IndexFunc(c, func(r rune) bool { return !usernameSafe(r) }) >= 0 {
		return "", &PolicyError{Reason: "The username may contain only letters a to z, digits and . _ - @ (capitals are stored in lower case)."}
	}
	return c, nil
}
