package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Messages of accepted decisions and cancellations, and of a bad run address (flashes are
// fixed texts; details such as who decided are on the run page; the messages of refusals are
// the refusal table's, package refusal).
const (
	msgApproved         = "Approval recorded; the run continues."
	msgDenied           = "Denial recorded; the run continues."
	msgRequestApproved  = "Approval recorded; the decision goes back to the agent that asked."
	msgRequestDenied    = "Denial recorded; the decision goes back to the agent that asked."
	msgRequestAnswered  = "Answer recorded; it goes back to the agent that asked."
	msgVoted            = "Your approval was counted; the turn waits for the other approvals it needs."
	msgChangesRequested = "Changes requested; the model is told what to revise and the run continues."
	msgCancelled        = "The run was cancelled."
	msgAssigned         = "The run's assignment was changed."
	msgRunStarted       = "Run started. It is queued and begins shortly."
	msgBadRunReference  = "There is no run at this address."
)

// runParam returns the :uuid path parameter, or a 404 error when it cannot be a run id.
func runParam(c echo.Context) (string, error) {
	uuid := c.Param("uuid")
	if !isRunID(uuid) {
		return "", publicError(http.StatusNotFound, "run_not_found", msgBadRunReference)
	}
	return uuid, nil
}

// isRunID reports whether s looks like a run uuid: 36 characters of hex digits and dashes.
func isRunID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for _, r := range s {
		if r != '-' && !isHex(r) {
			return false
		}
	}
	return true
}

func isHex(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
}
