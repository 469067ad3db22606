package backend

import (
	"testing"

	"runsdesk/typo3/passwords"
)

// TestDummyHashIsVerified: the hash SignIn spends time on for unknown usernames must be one
// Verify works through (a malformed one would be refused at once, and unknown usernames
// answered faster than known ones).
func TestDummyHashIsVerified(t *testing.T) {
	ok, err := passwords.Verify(dummyHash, "any password")
	if err != nil || ok {
		t.Errorf("Verify(dummyHash) = %v, %v; want false, nil", ok, err)
	}
}
