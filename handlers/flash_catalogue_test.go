package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"runsdesk/handlers/refusal"
	"runsdesk/views"
)

// TestFlashCatalogue: every flashCode constant of flash.go and every flash of the refusal
// table is in the catalogue, once; codes are short cookie-safe words without the separator;
// texts are set; one (kind, text) has one code.
func TestFlashCatalogue(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "flash.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[flashCode]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "flashCode" {
				continue
			}
			for _, v := range vs.Values {
				lit, err := strconv.Unquote(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				if declared[flashCode(lit)] {
					t.Errorf("code %q declared twice", lit)
				}
				declared[flashCode(lit)] = true
			}
		}
	}
	for _, fl := range refusal.Flashes() {
		if declared[flashCode(fl.Code)] {
			t.Errorf("code %q declared twice (flash.go and the refusal table)", fl.Code)
		}
		declared[flashCode(fl.Code)] = true
	}
	if len(declared) != len(flashCatalogue) {
		t.Errorf("%d flashCode constants, %d catalogue entries", len(declared), len(flashCatalogue))
	}
	seen := map[views.Flash]flashCode{}
	for code, fl := range flashCatalogue {
		if !declared[code] {
			t.Errorf("catalogue code %q is neither a flashCode constant nor a refusal flash", code)
		}
		if len(code) == 0 || len(code) > 16 || strings.Trim(string(code), "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			t.Errorf("code %q: want 1–16 lower-case letters, digits and dashes", code)
		}
		if fl.Text == "" || !slices.Contains([]views.FlashKind{views.FlashSuccess, views.FlashInfo, views.FlashError}, fl.Kind) {
			t.Errorf("code %q: %+v", code, fl)
		}
		if other, dup := seen[fl]; dup {
			t.Errorf("codes %q and %q are the same message", code, other)
		}
		seen[fl] = code
	}
}

// TestFlashesAccumulateInOneResponse: flashes of one request add to the request's cookie and
// to each other in a single Set-Cookie, at most flashMax codes; a page in the same request
// shows them all and leaves one deleting Set-Cookie.
func TestFlashesAccumulateInOneResponse(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.AddCookie(&http.Cookie{Name: flashCookieInsecure, Value: "cancelled.bogus"})
	rec := httptest.NewRecorder()
	c := app.e.NewContext(req, rec)
	c.Response().Header().Add("Set-Cookie", "other=1")
	for _, code := range []flashCode{flashApproved, flashDenied, flashInputSubmitted, flashRunStarted} {
		app.h.flash(c, code)
	}
	var flashLines []string
	for _, line := range c.Response().Header().Values("Set-Cookie") {
		if strings.HasPrefix(line, flashCookieInsecure+"=") {
			flashLines = append(flashLines, line)
		}
	}
	if len(flashLines) != 1 || !strings.HasPrefix(flashLines[0], flashCookieInsecure+"=cancelled.approved.denied.input-ok;") {
		t.Fatalf("Set-Cookie %q: want one flash cookie cancelled.approved.denied.input-ok", c.Response().Header().Values("Set-Cookie"))
	}
	got := app.h.popFlashes(c)
	want := []views.Flash{flashCatalogue[flashCancelled], flashCatalogue[flashApproved], flashCatalogue[flashDenied], flashCatalogue[flashInputSubmitted]}
	if !slices.Equal(got, want) {
		t.Errorf("popFlashes %+v, want %+v", got, want)
	}
	lines := c.Response().Header().Values("Set-Cookie")
	if len(lines) != 2 || lines[0] != "other=1" || !strings.Contains(lines[1], "Max-Age=0") {
		t.Errorf("after popFlashes: Set-Cookie %q, want other=1 and one deleting flash cookie", lines)
	}
	if again := app.h.popFlashes(c); len(again) != 0 {
		t.Errorf("popFlashes twice in one request: %+v", again)
	}
}
