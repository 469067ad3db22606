package refusal

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// runtimeCodes returns the Code constants declared in runtime/errors.go, as declared.
func runtimeCodes(t *testing.T) []runtime.Code {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../runtime/errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []runtime.Code
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, v := range vs.Values {
				lit, err := strconv.Unquote(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				codes = append(codes, runtime.Code(lit))
			}
		}
	}
	if len(codes) == 0 {
		t.Fatal("no Code constants found in runtime/errors.go")
	}
	return codes
}

// TestRefusalTable: every runtime code has exactly one row and the table has no other row;
// each row has its status (the error catalogue's), an API message, and flashes whose codes
// are unique to one message.
func TestRefusalTable(t *testing.T) {
	codes := runtimeCodes(t)
	declared := slices.Clone(codes)
	slices.Sort(declared)
	if len(slices.Compact(slices.Clone(declared))) != len(declared) {
		t.Fatalf("runtime declares a code twice: %v", codes)
	}
	if got := Codes(); !slices.Equal(got, declared) {
		t.Fatalf("table codes %v, runtime declares %v", got, declared)
	}
	status := map[runtime.Code]int{
		runtime.CodeRunNotFound: 404, runtime.CodeConfigurationNotFound: 404,
		runtime.CodeRunNotAwaitingApproval: 400, runtime.CodeRunNotAwaitingInput: 400, runtime.CodeRunConfigurationGone: 400, runtime.CodeInvalidRequest: 400,
		runtime.CodeRunAccessDenied: 403, runtime.CodeSelfApprovalDenied: 403, runtime.CodeApproverNotPermitted: 403, runtime.CodeSubmitterNotPermitted: 403,
		runtime.CodeRunAlreadyResuming: 409, runtime.CodeStaleApprovalTurn: 409, runtime.CodeStaleInputTurn: 409, runtime.CodeRunNotCancellable: 409, runtime.CodeRunExpired: 409,
		runtime.CodeToolChanged: 409, runtime.CodeExternalIDConflict: 409, runtime.CodeIdempotencyKeyConflict: 409, runtime.CodeAlreadyAssigned: 409, runtime.CodeAssignedToOther: 403, runtime.CodeAlreadyVoted: 409, runtime.CodeQuorumReached: 409,
		runtime.CodeInvalidInputSubmission: 422, runtime.CodeInvalidEdit: 422, runtime.CodeEditNotPermitted: 403, runtime.CodeUnknownTool: 422, runtime.CodeCallbackNotAllowed: 422, runtime.CodeCallbacksNotEnabled: 422,
		runtime.CodeApprovalNotAuditable: 503, runtime.CodeRunStateUnavailable: 503,
		runtime.CodeCorruptSuspendedState: 500, runtime.CodeSealingKeyMissing: 500, runtime.CodeElicitationExpired: 410,
	}
	byCode := map[string]Flash{}
	for _, code := range codes {
		row, ok := Of(code)
		if !ok {
			t.Errorf("%s: no row", code)
			continue
		}
		if row.Status != status[code] {
			t.Errorf("%s: status %d, want %d", code, row.Status, status[code])
		}
		if row.Message == "" {
			t.Errorf("%s: no API message", code)
		}
		for _, m := range []map[Form]Flash{row.Flash, row.Settings} {
			for form, fl := range m {
				if fl.Code == "" || fl.Text == "" || fl.Kind == "" {
					t.Errorf("%s on %s: incomplete flash %+v", code, form, fl)
				}
				if other, seen := byCode[fl.Code]; seen && other != fl {
					t.Errorf("flash code %q has two messages: %+v and %+v", fl.Code, other, fl)
				}
				byCode[fl.Code] = fl
			}
		}
		for form := range row.Settings {
			if _, ok := row.Flash[form]; !ok {
				t.Errorf("%s: a Settings flash on %s without its Flash", code, form)
			}
		}
	}
	if len(Flashes()) != len(byCode) {
		t.Errorf("Flashes has %d, the rows %d", len(Flashes()), len(byCode))
	}
	if row, ok := Of("no_such_code"); ok || row.Status != 500 {
		t.Errorf("an unknown code: %+v, %v; want a 500 and ok=false", row, ok)
	}
}

// TestDocumentedRefusals: docs/state-machine.md's error catalogue has one row per code of the
// table, with its status and its API message (a message the document shortens with "…" must
// begin with the text before it).
func TestDocumentedRefusals(t *testing.T) {
	doc, err := os.ReadFile("../../docs/state-machine.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[runtime.Code][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		code := runtime.Code(strings.Trim(cells[1], "`"))
		if _, dup := rows[code]; dup {
			t.Errorf("%s is documented twice", code)
		}
		rows[code] = cells
	}
	for _, code := range Codes() {
		row, _ := Of(code)
		cells, ok := rows[code]
		if !ok {
			t.Errorf("%s: not in the document's error catalogue", code)
			continue
		}
		delete(rows, code)
		if cells[3] != strconv.Itoa(row.Status) {
			t.Errorf("%s: documented status %s, the table's %d", code, cells[3], row.Status)
		}
		msg := cells[5]
		if short, _, cut := strings.Cut(msg, "…"); cut {
			if !strings.HasPrefix(row.Message, short) {
				t.Errorf("%s: documented message %q does not begin the table's %q", code, msg, row.Message)
			}
		} else if msg != row.Message {
			t.Errorf("%s: documented message %q, the table's %q", code, msg, row.Message)
		}
	}
	for code := range rows {
		t.Errorf("%s: documented but not in the table", code)
	}
}

// TestBatchOutcomes: a bulk item refused with a code is labelled from the code's row; the
// refusals of an approval that leave the run waiting for someone else, or decided, have a
// label of their own, anything else is "not decided".
func TestBatchOutcomes(t *testing.T) {
	want := map[runtime.Code]Outcome{
		runtime.CodeStaleApprovalTurn:      OutcomeStale,
		runtime.CodeRunAlreadyResuming:     OutcomeHandled,
		runtime.CodeRunNotAwaitingApproval: OutcomeHandled,
		runtime.CodeApproverNotPermitted:   OutcomeNotPermitted,
		runtime.CodeSelfApprovalDenied:     OutcomeFourEyes,
		runtime.CodeRunAccessDenied:        OutcomeNotPermitted,
		runtime.CodeApprovalNotAuditable:   OutcomeNotDecided,
		runtime.CodeCorruptSuspendedState:  OutcomeNotDecided,
		runtime.CodeAlreadyVoted:           OutcomeAlreadyVoted,
		runtime.CodeQuorumReached:          OutcomeHandled,
	}
	for code, label := range want {
		row, _ := Of(code)
		if got := row.BatchOutcome(); got != label {
			t.Errorf("%s: batch outcome %q, want %q", code, got, label)
		}
	}
	if _, row := OfError(errors.New("not a runtime error")); row.BatchOutcome() != OutcomeNotDecided {
		t.Errorf("a foreign error is %q, want not decided", row.BatchOutcome())
	}
	row, _ := Of(runtime.CodeApproverNotPermitted)
	for reason, label := range map[string]Outcome{runtime.ReasonToolAdminOnly: OutcomeAdminOnly, runtime.ReasonToolNoLongerPermitted: OutcomeToolDisabled,
		runtime.ReasonToolNotRegistered: OutcomeToolUnknown, runtime.ReasonDeciderDisabled: OutcomeDeciderLocked, runtime.ReasonServiceAccountWrite: OutcomeNotPermitted} {
		re := &runtime.Error{Code: runtime.CodeApproverNotPermitted, GateDenial: &runtime.GovernanceEvent{Reason: reason}}
		if got := row.BatchOutcomeOf(re); got != label {
			t.Errorf("approver gate %s: batch outcome %q, want %q", reason, got, label)
		}
	}
}
