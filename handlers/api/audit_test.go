package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"runsdesk/handlers/api"
)

// TestAuditTrail: starts, decisions (accepted and refused), cancels, scope denials and bad
// tokens are recorded with the service account's name, never with a token.
func TestAuditTrail(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	write := w.runIn("write")
	created := decode[runBody](t, w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["all"], body: `{"configuration":"plain","prompt":"hi"}`}), http.StatusCreated)
	w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + write + "/approval", token: w.tokens["all"], body: approval(true, w.digest(write))})
	w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", token: w.tokens["all"], body: approval(true, w.digest(id))})
	w.rt.Wait()
	w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + write + "/cancel", token: w.tokens["read"]})
	w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + write + "/cancel", token: w.tokens["all"]})
	w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: "rdsk_wrongwrongwrongwrong"})
	w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id})

	rows, err := w.audit.RecentAudit(w.ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		got = append(got, strings.Join([]string{r.ActorName, r.Action, r.RunUUID, r.Outcome}, "|"))
		for _, tok := range w.tokens {
			if strings.Contains(r.Reason, tok) || strings.Contains(r.ActorName, tok) {
				t.Errorf("token in audit row %+v", r)
			}
		}
	}
	want := []string{
		"ci-all|" + api.AuditRunStart + "|" + created.UUID + "|success",
		"ci-all|" + api.AuditApproval + "|" + write + "|approver_not_permitted",
		"ci-all|" + api.AuditApproval + "|" + id + "|approved",
		"ci-read|" + api.AuditAccessDenied + "|" + write + "|denied",
		"ci-all|" + api.AuditCancel + "|" + write + "|success",
		"|" + api.AuditTokenFailure + "||failure",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("audit rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
