package views

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"runsdesk/runtime/schema"
)

// widgetSchema has one property per widget the form offers.
const widgetSchema = `{
  "type": "object",
  "required": ["name", "count", "method", "address"],
  "properties": {
    "name":    {"type": "string", "title": "Full name", "description": "As on the card.", "minLength": 2, "maxLength": 40, "pattern": "^[A-Za-z ]+$"},
    "story":   {"type": "string", "maxLength": 5000},
    "amount":  {"type": "number", "minimum": 0.5, "exclusiveMaximum": 100, "multipleOf": 0.5, "default": 2.5},
    "count":   {"type": "integer", "minimum": 1, "maximum": 9},
    "agree":   {"type": "boolean", "default": true},
    "method":  {"type": "string", "enum": ["card", "bank"]},
    "size":    {"type": "string", "enum": ["s", "m"], "default": "m"},
    "day":     {"type": "string", "format": "date"},
    "at":      {"type": "string", "format": "date-time", "default": "2024-05-01T09:30:00+02:00"},
    "clock":   {"type": "string", "format": "time", "default": "08:15:00Z"},
    "mail":    {"type": "string", "format": "email"},
    "site":    {"type": "string", "format": "uri"},
    "address": {"type": "object", "title": "Address", "required": ["street"], "properties": {
                 "street": {"type": "string"}, "zip": {"type": "string"}}},
    "billing": {"type": "object", "required": ["iban"], "properties": {"iban": {"type": "string"}}},
    "notes":   {"type": "array", "items": {"type": "string"}, "maxItems": 3, "default": ["one", "two"]},
    "colours": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "default": ["green"]},
    "blob":    {"oneOf": [{"type": "object"}, {"type": "array"}]}
  }
}`

func widgetFields(t *testing.T) []schema.Field {
	t.Helper()
	s, err := schema.Compile([]byte(widgetSchema))
	if err != nil {
		t.Fatal(err)
	}
	return s.Fields()
}

func formProps(t *testing.T, uuid string) InputFormProps {
	return InputFormProps{RunUUID: uuid, Action: "/runs/" + uuid + "/input", CSRF: "tok", Fields: widgetFields(t),
		Digest: "sha256:abc", IdempotencyKey: "key-1"}
}

// control returns the element named "input"+ptr.
func control(doc *goquery.Document, ptr string) *goquery.Selection {
	return doc.Find(`[name="input` + ptr + `"]`)
}

func TestInputFormWidgets(t *testing.T) {
	doc := render(t, InputForm(formProps(t, "r1")))
	for _, tc := range []struct {
		ptr, tag, typ string
		attrs         map[string]string
	}{
		{"/name", "input", "text", map[string]string{"minlength": "2", "maxlength": "40", "pattern": "[A-Za-z ]+", "required": ""}},
		{"/story", "textarea", "", map[string]string{"maxlength": "5000"}},
		{"/amount", "input", "number", map[string]string{"min": "0.5", "step": "0.5", "value": "2.5"}},
		{"/count", "input", "number", map[string]string{"min": "1", "max": "9", "step": "1", "required": ""}},
		{"/agree", "input", "checkbox", map[string]string{"checked": "", "value": "true"}},
		{"/method", "select", "", map[string]string{"required": ""}},
		{"/day", "input", "date", nil},
		{"/at", "input", "datetime-local", map[string]string{"value": "2024-05-01T07:30"}},
		{"/clock", "input", "time", map[string]string{"value": "08:15"}},
		{"/mail", "input", "email", nil},
		{"/site", "input", "url", nil},
		{"/address/street", "input", "text", map[string]string{"required": ""}},
		{"/address/zip", "input", "text", nil},
		{"/billing/iban", "input", "text", nil},
		{"/notes", "textarea", "", nil},
		{"/blob", "textarea", "", nil},
	} {
		el := control(doc, tc.ptr)
		if el.Length() != 1 || goquery.NodeName(el) != tc.tag {
			t.Errorf("%s: %d elements <%s>, want one <%s>", tc.ptr, el.Length(), goquery.NodeName(el), tc.tag)
			continue
		}
		if tc.typ != "" && el.AttrOr("type", "") != tc.typ {
			t.Errorf("%s: type %q, want %q", tc.ptr, el.AttrOr("type", ""), tc.typ)
		}
		for k, v := range tc.attrs {
			if got, ok := el.Attr(k); !ok || got != v {
				t.Errorf("%s: %s=%q (present %v), want %q", tc.ptr, k, got, ok, v)
			}
		}
		if id := el.AttrOr("id", ""); id != FieldID("r1", tc.ptr) || doc.Find(`label[for="`+id+`"]`).Length() != 1 {
			t.Errorf("%s: id %q, want %q with one label", tc.ptr, id, FieldID("r1", tc.ptr))
		}
	}
	if _, ok := control(doc, "/amount").Attr("max"); ok {
		t.Error("an exclusive maximum became an inclusive max attribute")
	}
	for _, ptr := range []string{"/billing/iban", "/address/zip", "/agree", "/amount"} {
		if _, ok := control(doc, ptr).Attr("required"); ok {
			t.Errorf("%s carries native required, but may be left empty", ptr)
		}
	}
	if got := doc.Find(`label[for="` + FieldID("r1", "/billing/iban") + `"] .field__required`).Length(); got != 1 {
		t.Error("iban (required within its optional object) should still show *")
	}
	if got := doc.Find(`fieldset[id="` + FieldID("r1", "/billing") + `"]`).Text(); !strings.Contains(got, "if you fill in any of it") {
		t.Errorf("optional section note missing: %q", got)
	}
	if got := control(doc, "/notes").Text(); got != "one\ntwo" {
		t.Errorf("notes default %q", got)
	}
	if got := strings.TrimSpace(doc.Find(`fieldset[id="` + FieldID("r1", "/address") + `"] > legend`).Text()); !strings.HasPrefix(got, "Address") {
		t.Errorf("address legend %q", got)
	}
	colours := doc.Find(`fieldset[id="` + FieldID("r1", "/colours") + `"] input[type="checkbox"][name="input/colours"]`)
	if colours.Length() != 3 || colours.Filter("[checked]").AttrOr("value", "") != "green" {
		t.Errorf("colours: %d boxes, checked %q; want 3 with green", colours.Length(), colours.Filter("[checked]").AttrOr("value", ""))
	}
	method := control(doc, "/method").Find("option")
	if method.Length() != 3 || method.First().AttrOr("value", "x") != "" || method.First().Text() != "Choose…" {
		t.Errorf("required select without a choice needs an empty first option: %d options", method.Length())
	}
	size := control(doc, "/size").Find("option")
	if size.Length() != 3 || size.Filter("[selected]").AttrOr("value", "") != "m" {
		t.Errorf("optional select: %d options, selected %q", size.Length(), size.Filter("[selected]").AttrOr("value", ""))
	}
	for ptr, want := range map[string]string{"/at": "UTC", "/clock": "UTC", "/notes": "One per line", "/blob": "JSON", "/amount": "less than 100"} {
		if got := doc.Find(`[id="` + FieldID("r1", ptr) + `-hint"]`).Text(); !strings.Contains(got, want) {
			t.Errorf("%s hint %q, want it to say %q", ptr, got, want)
		}
	}
	for name, want := range map[string]string{"_csrf": "tok", FormFieldDigest: "sha256:abc", FormFieldIdempotencyKey: "key-1"} {
		if got := doc.Find(`input[type="hidden"][name="`+name+`"]`).AttrOr("value", ""); got != want {
			t.Errorf("hidden %s = %q, want %q", name, got, want)
		}
	}
	if doc.Find(`[data-testid="input-submit"]`).Length() != 1 || doc.Find(".error-summary").Length() != 0 {
		t.Error("want one submit button and no error summary")
	}
	checkReferences(t, doc)
}

// checkReferences fails on duplicate ids and on aria-describedby, label for or summary links
// that point nowhere.
func checkReferences(t *testing.T, doc *goquery.Document) {
	t.Helper()
	ids := map[string]int{}
	doc.Find("[id]").Each(func(_ int, s *goquery.Selection) { ids[s.AttrOr("id", "")]++ })
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q used %d times", id, n)
		}
	}
	doc.Find("[aria-describedby]").Each(func(_ int, s *goquery.Selection) {
		for _, id := range strings.Fields(s.AttrOr("aria-describedby", "")) {
			if ids[id] == 0 {
				t.Errorf("aria-describedby names missing id %q", id)
			}
		}
	})
	doc.Find("label[for]").Each(func(_ int, s *goquery.Selection) {
		if ids[s.AttrOr("for", "")] == 0 {
			t.Errorf("label for missing id %q", s.AttrOr("for", ""))
		}
	})
	doc.Find(`.error-summary a[href^="#"]`).Each(func(_ int, s *goquery.Selection) {
		if ids[strings.TrimPrefix(s.AttrOr("href", ""), "#")] == 0 {
			t.Errorf("summary links to missing id %q", s.AttrOr("href", ""))
		}
	})
}

func TestInputFormTitledEnums(t *testing.T) {
	s, err := schema.Compile([]byte(`{"type":"object","properties":{
		"reason":{"type":"string","oneOf":[{"const":"original_payment","title":"Refund to the original payment"},{"const":"cash"}]},
		"channels":{"type":"array","items":{"anyOf":[{"const":"mail","title":"E-mail"},{"const":"sms","title":"Text message"}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := render(t, InputForm(InputFormProps{RunUUID: "r", Action: "/runs/r/input", Fields: s.Fields()}))
	var options []string
	control(doc, "/reason").Find("option").Each(func(_ int, o *goquery.Selection) {
		options = append(options, o.AttrOr("value", "")+"="+o.Text())
	})
	if got := strings.Join(options, "|"); got != "=Choose…|original_payment=Refund to the original payment|cash=cash" {
		t.Errorf("select options %q: want the titles shown and the consts submitted", got)
	}
	var boxes []string
	control(doc, "/channels").Each(func(_ int, box *goquery.Selection) {
		label := doc.Find(`label[for="` + box.AttrOr("id", "") + `"]`).Text()
		boxes = append(boxes, box.AttrOr("value", "")+"="+label)
	})
	if got := strings.Join(boxes, "|"); got != "mail=E-mail|sms=Text message" {
		t.Errorf("checkboxes %q: want the titles as labels and the consts as values", got)
	}
	if strings.Contains(doc.Text(), "original_payment") {
		t.Error("the raw value original_payment is shown although it has a title")
	}
	checkReferences(t, doc)
}

// linesSchema is a list of rows (objects) with a default row and a maximum of three.
const linesSchema = `{"type":"object","properties":{"lines":{"type":"array","title":"Order lines","maxItems":3,
	"items":{"type":"object","title":"Line","required":["sku"],"properties":{"sku":{"type":"string","title":"SKU"},"qty":{"type":"integer"}}},
	"default":[{"sku":"A-1","qty":2}]},"after":{"type":"string"}}}`

func linesProps(t *testing.T) InputFormProps {
	t.Helper()
	s, err := schema.Compile([]byte(linesSchema))
	if err != nil {
		t.Fatal(err)
	}
	return InputFormProps{RunUUID: "r", Action: "/runs/r/input", CSRF: "tok", Fields: s.Fields(), Digest: "d", IdempotencyKey: "k"}
}

func TestInputFormRowsOfAnArrayOfObjects(t *testing.T) {
	doc := render(t, InputForm(linesProps(t)))
	rows := doc.Find(`fieldset[id="` + FieldID("r", "/lines") + `"] fieldset[data-testid="row"]`)
	if rows.Length() != 1 || strings.TrimSpace(rows.Find("legend").First().Text()) != "Line 1" {
		t.Fatalf("want the one default row, legend Line 1: %d rows", rows.Length())
	}
	if got := control(doc, "/lines/0/sku").AttrOr("value", ""); got != "A-1" {
		t.Errorf("default row sku %q", got)
	}
	if _, ok := control(doc, "/lines/0/sku").Attr("required"); !ok {
		t.Error("a row's required field is not required in the browser")
	}
	if got := doc.Find(`input[type="hidden"][name="input/lines"]`).AttrOr("value", ""); got != "1" {
		t.Errorf("row count %q, want 1", got)
	}
	remove := rows.Find(`button[data-testid="row-remove"]`)
	if remove.AttrOr("type", "") != "submit" || remove.AttrOr("name", "") != FormFieldRows || remove.AttrOr("value", "") != "remove /lines/0" ||
		!remove.Is("[formnovalidate]") {
		t.Errorf("Remove is not a submit button posting its row: %v", remove.Nodes)
	}
	add := doc.Find(`button[data-testid="row-add"]`)
	if add.AttrOr("name", "") != FormFieldRows || add.AttrOr("value", "") != "add /lines" || !add.Is("[formnovalidate]") {
		t.Errorf("Add another is not a submit button posting its list: %v", add.Nodes)
	}
	if got := add.AttrOr("formaction", ""); got != "/runs/r/input#"+FieldID("r", "/lines/1") {
		t.Errorf("Add another posts to %q, want the form's action scrolled to the new row", got)
	}
	if got := remove.AttrOr("formaction", ""); got != "/runs/r/input#"+FieldID("r", "/lines") {
		t.Errorf("Remove posts to %q, want the form's action scrolled to the list", got)
	}
	if first := doc.Find(`form button[type="submit"]`).First(); first.Text() != "Submit input" || first.AttrOr("name", "") != "" {
		t.Errorf("the form's first submit button (Enter in a field) is %q, want the hidden Submit input", first.Text())
	}
	checkReferences(t, doc)

	p := linesProps(t)
	p.Values = url.Values{"input/lines": {"3"}, "input/lines/0/sku": {"A-1"}, "input/lines/1/qty": {"x"}, "input/lines/2/sku": {"C-3"}}
	p.Errors = map[string]string{"/lines/1/sku": "This field is required.", "/lines/1/qty": "Enter a whole number."}
	doc = render(t, InputForm(p))
	if n := doc.Find(`fieldset[data-testid="row"]`).Length(); n != 3 {
		t.Errorf("%d rows shown, want the 3 posted", n)
	}
	if got := control(doc, "/lines/1/qty").AttrOr("value", ""); got != "x" || control(doc, "/lines/1/qty").AttrOr("aria-invalid", "") != "true" {
		t.Errorf("row 2 qty %q not kept or not marked invalid", got)
	}
	if got := doc.Find(`[id="` + FieldID("r", "/lines/1/sku") + `-error"]`).Text(); !strings.Contains(got, "This field is required.") {
		t.Errorf("row 2 sku error %q", got)
	}
	var items []string
	doc.Find("#" + InputErrorsID("r") + " li").Each(func(_ int, s *goquery.Selection) { items = append(items, s.Text()) })
	if got := strings.Join(items, "|"); got != "Order lines, Line 2, SKU: This field is required.|Order lines, Line 2, Qty: Enter a whole number." {
		t.Errorf("summary %q", got)
	}
	if doc.Find(`button[data-testid="row-add"]`).Length() != 0 {
		t.Error("Add another is offered at maxItems")
	}
	checkReferences(t, doc)

	p = linesProps(t)
	p.ReadOnly = true
	doc = render(t, InputForm(p))
	if doc.Find(`button`).Length() != 0 || doc.Find(`fieldset[disabled] fieldset[data-testid="row"]`).Length() != 1 {
		t.Error("a read-only list offers buttons or hides its rows")
	}
}

func TestInputFormKeepsPostedValuesOverDefaults(t *testing.T) {
	p := formProps(t, "r2")
	p.Values = url.Values{
		"input/name":    {"  Zoë \t Ünal  "},
		"input/amount":  {"abc"},
		"input/notes":   {"\nfirst\r\n\n second "},
		"input/size":    {"s"},
		"input/colours": {"red", "blue"},
	}
	p.Errors = map[string]string{"/amount": "Enter a number.", "/address/street": "This field is required.", "/ghost": "Something else."}
	p.FormError = "The submitted input did not match the required schema."
	doc := render(t, InputForm(p))
	if got := control(doc, "/name").AttrOr("value", ""); got != "  Zoë \t Ünal  " {
		t.Errorf("name %q", got)
	}
	if got := control(doc, "/amount").AttrOr("value", ""); got != "abc" {
		t.Errorf("amount %q, want the typed text rather than the default", got)
	}
	if got := control(doc, "/notes").Text(); got != "\nfirst\r\n\n second " && got != "\nfirst\n\n second " {
		t.Errorf("notes %q: a leading newline must survive", got)
	}
	if _, ok := control(doc, "/agree").Attr("checked"); ok {
		t.Error("agree was not posted (unchecked) but shows its default tick")
	}
	if got := control(doc, "/at").AttrOr("value", "x"); got != "" {
		t.Errorf("at %q: a posted form shows no defaults", got)
	}
	if got := control(doc, "/size").Find("[selected]").AttrOr("value", ""); got != "s" {
		t.Errorf("size selected %q", got)
	}
	var ticked []string
	doc.Find(`input[name="input/colours"][checked]`).Each(func(_ int, s *goquery.Selection) { ticked = append(ticked, s.AttrOr("value", "")) })
	if strings.Join(ticked, ",") != "red,blue" {
		t.Errorf("colours ticked %v", ticked)
	}
	summary := doc.Find("#" + InputErrorsID("r2"))
	var items []string
	summary.Find("li").Each(func(_ int, s *goquery.Selection) { items = append(items, s.Text()) })
	want := []string{"Amount: Enter a number.", "Street: This field is required.", "Something else.", p.FormError}
	if strings.Join(items, "|") != strings.Join(want, "|") {
		t.Errorf("summary %q, want %q", items, want)
	}
	if summary.AttrOr("tabindex", "") != "-1" || summary.AttrOr("data-error-summary", "x") != "" ||
		!strings.Contains(summary.Find("h2").Text(), InputErrorsTitle) {
		t.Error("summary is not the focusable error summary")
	}
	amount := control(doc, "/amount")
	if amount.AttrOr("aria-invalid", "") != "true" || !strings.Contains(amount.AttrOr("aria-describedby", ""), FieldID("r2", "/amount")+"-error") {
		t.Errorf("amount not marked invalid: %v", amount.Nodes[0].Attr)
	}
	if got := doc.Find(`[id="` + FieldID("r2", "/amount") + `-error"]`).Text(); !strings.Contains(got, "Enter a number.") {
		t.Errorf("amount error %q", got)
	}
	checkReferences(t, doc)
}

func TestInputFormsShareAPage(t *testing.T) {
	a, b := formProps(t, "run-a"), formProps(t, "run-b")
	a.Errors = map[string]string{"/name": "Too short."}
	b.Errors = map[string]string{"/name": "Too short."}
	doc := render(t, pageOf(InputForm(a), InputForm(b)))
	checkReferences(t, doc)
	if doc.Find(`[data-testid="input-form"]`).Length() != 2 {
		t.Error("want two forms")
	}
}

func TestInputFormWithoutFieldsSaysTheStateIsUnreadable(t *testing.T) {
	doc := render(t, InputForm(InputFormProps{RunUUID: "r3", Action: "/runs/r3/input", CSRF: "tok"}))
	if doc.Find("form").Length() != 0 {
		t.Error("a schema without fields rendered a form")
	}
	if got := doc.Find(`[data-testid="input-unreadable"]`).Text(); !strings.Contains(got, InputUnreadableText) {
		t.Errorf("text %q", got)
	}
}

func TestInputFormReadOnly(t *testing.T) {
	p := formProps(t, "r4")
	p.ReadOnly = true
	doc := render(t, InputForm(p))
	if doc.Find(`fieldset[disabled]`).Length() != 1 || doc.Find(`fieldset[disabled] [name="input/name"]`).Length() != 1 {
		t.Error("read-only fields are not disabled")
	}
	if doc.Find(`[data-testid="input-submit"]`).Length() != 0 || doc.Find(`input[type="hidden"]`).Length() != 0 {
		t.Error("a read-only form offers a submit button or carries tokens")
	}
}

func TestFieldIDIsDistinctAndSafe(t *testing.T) {
	seen := map[string]string{}
	for _, ptr := range []string{"", "/a", "/a_b", "/a__b", "/a/b", "/a.b", "/a_2e", "/a-b", "/ä", "/a b", "/a\"b", "/~0", "/~1"} {
		id := FieldID("u", ptr)
		if prev, dup := seen[id]; dup {
			t.Errorf("%q and %q share id %q", prev, ptr, id)
		}
		seen[id] = ptr
		for _, r := range strings.TrimPrefix(id, "in-u-f") {
			if !(r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				t.Errorf("id %q of %q holds %q", id, ptr, r)
			}
		}
	}
}

// pageOf renders components one after the other.
func pageOf(cs ...templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		for _, c := range cs {
			if err := c.Render(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestInputFormExplainsTheStarOnlyWhenItShowsOne(t *testing.T) {
	for _, tc := range []struct {
		schema string
		want   int
	}{
		{`{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"},"n":{"type":"string"}}}`, 0},
		{`{"type":"object","properties":{"o":{"type":"object","required":["x"],"properties":{"x":{"type":"string"}}}}}`, 1},
	} {
		s, err := schema.Compile([]byte(tc.schema))
		if err != nil {
			t.Fatal(err)
		}
		doc := render(t, InputForm(InputFormProps{RunUUID: "r", Action: "/runs/r/input", Fields: s.Fields()}))
		if got := doc.Find(".input-form__legend").Length(); got != tc.want {
			t.Errorf("%s: %d explanations of *, want %d", tc.schema, got, tc.want)
		}
	}
}
