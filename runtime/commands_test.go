package runtime_test

import (
	"io"
	"testing"

	"runsdesk/runtime"
)

func TestVerdictAndNotAccepted(t *testing.T) {
	if runtime.Verdict(true) != "approved" || runtime.Verdict(false) != "denied" {
		t.Errorf("Verdict: %q, %q", runtime.Verdict(true), runtime.Verdict(false))
	}
	stale := &runtime.Error{Code: runtime.CodeStaleApprovalTurn, RunUUID: "u", Message: "m"}
	for _, c := range []struct {
		out  runtime.Outcome
		err  error
		want string
	}{
		{runtime.Outcome{Replayed: true}, nil, "replayed"},
		{runtime.Outcome{}, stale, "stale_approval_turn"},
		{runtime.Outcome{}, io.EOF, "error"},
	} {
		if got := runtime.NotAccepted(c.out, c.err); got != c.want {
			t.Errorf("NotAccepted(%+v, %v) = %q, want %q", c.out, c.err, got, c.want)
		}
	}
}
