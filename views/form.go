package views

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"runsdesk/runtime/schema"
)

// InputFormProps is everything InputForm needs to render the input form of one waiting run.
//
//   - RunUUID prefixes every element id, so several forms can live on one page.
//   - Action is the URL the form posts to (normally "/runs/<uuid>/input").
//   - CSRF is the session's token, sent as the hidden field "_csrf".
//   - Fields is the form derived from the stored schema (schema.Schema.Fields). With no fields
//     the component shows "This run's state could not be read; no action is available." and
//     no form, unless the pause is a remote server's confirmation (Elicitation.Confirmation):
//     then the server's message with Confirm (a submission without values), Decline and
//     Cancel.
//   - Values are the values as posted (the whole url.Values of a rejected submission, or of
//     one whose rows were added or removed). nil means nothing was posted yet: every field
//     shows its schema default and a list of rows its default rows, else its minimum number
//     of rows. When Values is set, every field shows exactly what was posted and defaults are
//     not used (an unchecked box stays unchecked); a list shows as many rows as posted.
//   - Errors maps a field's JSON pointer (schema.Field.Pointer) to its message; each is shown
//     under its field and listed, as a link to the field, in the error summary.
//   - FormError is a message about the form as a whole (shown in the summary). An entry of
//     Errors whose pointer names no field is shown the same way.
//   - Digest is echoed as the hidden "turn_digest"; IdempotencyKey as the hidden
//     "idempotency_key". Handlers make a fresh key per form shown and keep the posted key when
//     re-rendering a rejected submission, so a double submit replays instead of deciding twice.
//   - ReadOnly renders the fields disabled, without hidden fields and without a submit button,
//     for people who may look but not submit.
//   - Draft, when its Action is set, offers "Save draft" (see InputDraft).
//
// The summary, when there is one, has id "input-errors-<RunUUID>" and the attribute
// data-error-summary (static/app.js focuses it). Field ids come from FieldID.
type InputFormProps struct {
	RunUUID        string
	Action         string
	CSRF           string
	Fields         []schema.Field
	Values         url.Values
	Errors         map[string]string
	FormError      string
	Digest         string
	IdempotencyKey string
	ReadOnly       bool
	// PinDigest is echoed as the hidden FieldPinDigest.
	PinDigest string
	Draft     InputDraft
	// Elicitation is set when a remote server asked for the input: its message is shown, and
	// Decline and Cancel buttons answer it without input.
	Elicitation *ElicitationProps
	// SubmitLabel is the submit button's text ("" = "Submit input").
	SubmitLabel string
	// ReplaceURL, when set, is the address the page shows once loaded, with JavaScript (an
	// input form re-rendered in answer to a POST: its run page, so a reload does not post
	// again); the typed values are saved as the person's draft first, so that page restores them.
	ReplaceURL string
	// CancelHref, when set, is a Cancel link beside the buttons, back to where the form was
	// opened from (an edit form's run page); following it submits nothing.
	CancelHref string
	// Now is the page's clock, for the draft's and the request's times.
	Now time.Time
}

// InputDraft is the draft part of an input form. Action is the address of the "Save draft"
// button (which posts the form there unvalidated) and of static/app.js's autosave
// (data-draft); "" offers neither. Saved is when the draft shown in the form's Values was
// saved (zero: none is shown); Unreadable says a saved draft could not be read, SealedWith
// names the key it is sealed with when that key is missing from the desk's key set.
type InputDraft struct {
	Action     string
	Saved      time.Time
	Unreadable bool
	SealedWith string
}

// ElicitationProps is a remote server's request for input as the form shows it: the server's
// message and when the request expires (unix seconds). Confirmation: the request asks for no
// field, so the form is the message and its three answers.
type ElicitationProps struct {
	Message      string
	ExpiresAt    int64
	Confirmation bool
}

// Expires is when the request expires.
func (e ElicitationProps) Expires() time.Time { return time.Unix(e.ExpiresAt, 0) }

// Names of the hidden fields of the input form, and FormFieldRows, the name of the "Add
// another" and "Remove" buttons of a list of rows, whose value is a schema.Schema.EditRows
// action ("add /lines", "remove /lines/2").
const (
	FormFieldDigest         = "turn_digest"
	FormFieldIdempotencyKey = "idempotency_key"
	FormFieldRows           = "_rows"
	// FormFieldElicitation names the Decline and Cancel buttons of a remote server's request
	// for input; its value is "decline" or "cancel".
	FormFieldElicitation = "_elicitation"
)

// InputUnreadableText is what InputForm shows instead of a form when a schema yields no
// field the form can render.
const InputUnreadableText = "This run's state could not be read; no action is available."

// InputErrorsTitle heads the error summary of a rejected input submission.
const InputErrorsTitle = "Your input could not be submitted"

// InputFormID is the id of runUUID's input form element (a link target: "#" + InputFormID).
func InputFormID(runUUID string) string { return "input-form-" + runUUID }

// InputErrorsID is the id of the error summary of runUUID's input form.
func InputErrorsID(runUUID string) string { return "input-errors-" + runUUID }

// FieldID is the element id of the field at pointer in runUUID's input form:
// "in-<uuid>-f" followed by the pointer, "/" written as ".", letters, digits and "-" kept,
// "_" doubled and every other byte as "_" plus two hex digits. Distinct pointers give
// distinct ids.
func FieldID(runUUID, pointer string) string {
	var b strings.Builder
	b.WriteString("in-")
	b.WriteString(runUUID)
	b.WriteString("-f")
	for i := 0; i < len(pointer); i++ {
		c := pointer[i]
		switch {
		case c == '/':
			b.WriteByte('.')
		case c == '_':
			b.WriteString("__")
		case c == '-', c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

// formField is one field as the template renders it: the schema field plus what the props
// decide about it.
type formField struct {
	schema.Field
	ID string
	// Mandatory is true when the browser may insist on a value: the field is required and so
	// is every object around it.
	Mandatory bool
	Error     string
	p         *InputFormProps
}

func (p InputFormProps) fields(list []schema.Field, parentsRequired bool) []formField {
	out := make([]formField, len(list))
	for i, f := range list {
		out[i] = formField{Field: f, ID: FieldID(p.RunUUID, f.Pointer), Mandatory: parentsRequired && f.Required,
			Error: p.Errors[f.Pointer], p: &p}
	}
	return out
}

func (f formField) children() []formField {
	return f.p.fields(f.Children, f.Mandatory)
}

// rows are the rows a rows field shows, each an object field under its row's pointer. A row
// that exists insists on its required fields.
func (f formField) rows() []formField {
	list := make([]schema.Field, f.p.rowCount(f.Field))
	for i := range list {
		list[i] = f.Row(i)
	}
	return f.p.fields(list, true)
}

// rowCount is how many rows the rows field f shows: as posted, else its default rows, else
// its minimum number of items.
func (p InputFormProps) rowCount(f schema.Field) int {
	if p.posted() {
		n, _ := schema.RowCount(p.Values.Get(f.FormName))
		return n
	}
	if len(f.DefaultRows) > 0 {
		return len(f.DefaultRows)
	}
	if f.MinItems != nil {
		return min(*f.MinItems, schema.MaxRows)
	}
	return 0
}

// mayAddRow reports whether the rows field offers "Add another": below its maximum of items.
func (f formField) mayAddRow() bool {
	n := f.p.rowCount(f.Field)
	return n < schema.MaxRows && (f.MaxItems == nil || n < *f.MaxItems)
}

func (f formField) addRowAction() string { return schema.RowsActionAdd + " " + f.Pointer }

func (f formField) removeRowAction() string { return schema.RowsActionRemove + " " + f.Pointer }

// addRowTarget is where the page answering "Add another" scrolls to: the new row.
func (f formField) addRowTarget() string {
	return f.p.Action + "#" + FieldID(f.p.RunUUID, f.Pointer+"/"+strconv.Itoa(f.p.rowCount(f.Field)))
}

// removeRowTarget is where the page answering a row's "Remove" scrolls to: the list.
func (f formField) removeRowTarget(list formField) string { return f.p.Action + "#" + list.ID }

// hasRows reports whether any field of the form is a list of rows, whose buttons are submit
// buttons too.
func (p InputFormProps) hasRows() bool {
	var walk func([]schema.Field) bool
	walk = func(list []schema.Field) bool {
		for _, f := range list {
			if f.Kind == schema.KindRows || walk(f.Children) {
				return true
			}
		}
		return false
	}
	return walk(p.Fields)
}

// posted reports whether the form shows a submission rather than defaults.
func (p InputFormProps) posted() bool { return p.Values != nil }

// value is the text the field shows: as posted (nothing when that is not text), else its
// default in the widget's format.
func (f formField) value() string {
	if f.p.posted() {
		if v := f.p.Values.Get(f.FormName); schema.IsText(v) {
			return v
		}
		return ""
	}
	switch f.Kind {
	case schema.KindDateTime:
		return schema.FormDateTime(f.Default)
	case schema.KindTime:
		return schema.FormTime(f.Default)
	}
	return f.Default
}

// checked reports whether the checkbox of a boolean field is ticked.
func (f formField) checked() bool {
	if f.p.posted() {
		switch strings.ToLower(strings.TrimSpace(f.p.Values.Get(f.FormName))) {
		case "1", "on", "true", "yes":
			return true
		}
		return false
	}
	return f.Default == "true"
}

// optionChecked reports whether option is ticked in a multi-enum field.
func (f formField) optionChecked(option string) bool {
	if f.p.posted() {
		return slices.Contains(f.p.Values[f.FormName], option)
	}
	return slices.Contains(f.DefaultList, option)
}

// emptyOption reports whether a select offers "Choose…" (no value): always for optional
// fields, and for required ones while nothing is chosen.
func (f formField) emptyOption() bool {
	return !f.Required || !slices.Contains(f.Options, f.value())
}

func (f formField) optionID(i int) string { return f.ID + "-o" + strconv.Itoa(i) }

// optionLabel is what the person sees for option i: its title, else the value itself.
func (f formField) optionLabel(i int) string {
	if i < len(f.OptionLabels) && f.OptionLabels[i] != "" {
		return f.OptionLabels[i]
	}
	return f.Options[i]
}

func (f formField) descID() string  { return f.ID + "-desc" }
func (f formField) hintID() string  { return f.ID + "-hint" }
func (f formField) errorID() string { return f.ID + "-error" }

// describedBy lists the ids of the description, hint and error the field has.
func (f formField) describedBy() string {
	var ids []string
	if f.Description != "" {
		ids = append(ids, f.descID())
	}
	if f.hint() != "" {
		ids = append(ids, f.hintID())
	}
	if f.Error != "" {
		ids = append(ids, f.errorID())
	}
	return strings.Join(ids, " ")
}

// inputType is the type attribute of a single-line field.
func (f formField) inputType() string {
	switch f.Kind {
	case schema.KindNumber, schema.KindInteger:
		return "number"
	case schema.KindDate:
		return "date"
	case schema.KindDateTime:
		return "datetime-local"
	case schema.KindTime:
		return "time"
	case schema.KindEmail:
		return "email"
	case schema.KindURI:
		return "url"
	}
	return "text"
}

// inputMode helps phone keyboards for number fields.
func (f formField) inputMode() string {
	switch f.Kind {
	case schema.KindInteger:
		return "numeric"
	case schema.KindNumber:
		return "decimal"
	}
	return ""
}

// minAttr and maxAttr are the inclusive bounds for the min and max attributes ("" when the
// bound is exclusive or absent; the hint states it and the server enforces it).
func (f formField) minAttr() string {
	if f.Min == nil || f.ExclusiveMin {
		return ""
	}
	return formatNumber(*f.Min)
}

func (f formField) maxAttr() string {
	if f.Max == nil || f.ExclusiveMax {
		return ""
	}
	return formatNumber(*f.Max)
}

func intAttr(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// hint is the plain-language constraint under a field: bounds, lengths, item counts, the
// time zone and how to type lists and JSON.
func (f formField) hint() string {
	var parts []string
	switch f.Kind {
	case schema.KindNumber, schema.KindInteger:
		if f.Kind == schema.KindInteger {
			parts = append(parts, "A whole number")
		}
		parts = append(parts, rangeHint(f.Min, f.Max, f.ExclusiveMin, f.ExclusiveMax))
	case schema.KindString, schema.KindTextarea, schema.KindEmail, schema.KindURI:
		parts = append(parts, lengthHint(f.MinLength, f.MaxLength, "character"))
	case schema.KindDateTime:
		parts = append(parts, "Date and time in UTC")
	case schema.KindTime:
		parts = append(parts, "Time of day in UTC")
	case schema.KindArray:
		parts = append(parts, "One per line", lengthHint(f.MinItems, f.MaxItems, "entry"))
		if f.Item != nil {
			parts = append(parts, itemHint(*f.Item))
		}
	case schema.KindMultiEnum:
		parts = append(parts, lengthHint(f.MinItems, f.MaxItems, "choice"))
	case schema.KindRows:
		parts = append(parts, lengthHint(f.MinItems, f.MaxItems, "entry"))
	case schema.KindJSON:
		parts = append(parts, "Enter JSON (for example {\"key\": \"value\"} or [1, 2]); it is checked against the schema when you submit")
	}
	return joinHint(parts)
}

func itemHint(item schema.Field) string {
	switch item.Kind {
	case schema.KindNumber:
		return "each a number"
	case schema.KindInteger:
		return "each a whole number"
	case schema.KindBoolean:
		return "each true or false"
	case schema.KindDate:
		return "each a date (YYYY-MM-DD)"
	case schema.KindDateTime:
		return "each a date and time in UTC (YYYY-MM-DDTHH:MM)"
	case schema.KindTime:
		return "each a time in UTC (HH:MM)"
	case schema.KindEmail:
		return "each an email address"
	case schema.KindURI:
		return "each a URL"
	}
	if h := lengthHint(item.MinLength, item.MaxLength, "character"); h != "" {
		return "each " + h
	}
	return ""
}

func joinHint(parts []string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	s := strings.Join(kept, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func rangeHint(lo, hi *float64, exLo, exHi bool) string {
	low := func() string {
		if exLo {
			return "more than " + formatNumber(*lo)
		}
		return "at least " + formatNumber(*lo)
	}
	high := func() string {
		if exHi {
			return "less than " + formatNumber(*hi)
		}
		return "at most " + formatNumber(*hi)
	}
	switch {
	case lo != nil && hi != nil && !exLo && !exHi:
		return "from " + formatNumber(*lo) + " to " + formatNumber(*hi)
	case lo != nil && hi != nil:
		return low() + " and " + high()
	case lo != nil:
		return low()
	case hi != nil:
		return high()
	}
	return ""
}

func lengthHint(lo, hi *int, unit string) string {
	plural := func(n int) string {
		if n == 1 {
			return unit
		}
		if strings.HasSuffix(unit, "y") {
			return strings.TrimSuffix(unit, "y") + "ies"
		}
		return unit + "s"
	}
	switch {
	case lo != nil && hi != nil && *lo == *hi:
		return fmt.Sprintf("exactly %d %s", *lo, plural(*lo))
	case lo != nil && *lo > 0 && hi != nil:
		return fmt.Sprintf("%d to %d %s", *lo, *hi, plural(*hi))
	case lo != nil && *lo > 0:
		return fmt.Sprintf("at least %d %s", *lo, plural(*lo))
	case hi != nil:
		return fmt.Sprintf("at most %d %s", *hi, plural(*hi))
	}
	return ""
}

// groupNote explains the * inside an optional section.
func (f formField) groupNote() string {
	if f.Mandatory {
		return ""
	}
	for _, c := range f.Children {
		if c.Required {
			return "Optional section: if you fill in any of it, the fields marked * are required."
		}
	}
	return ""
}

// summaryItem is one link of the error summary.
type summaryItem struct {
	Href string
	Text string
}

// summary lists the errors in form order, each linking to its field (inside a row, named by
// the list and the row: "Lines, Line 2, Qty: …"), then errors about pointers the form has no
// field for, then FormError.
func (p InputFormProps) summary() []summaryItem {
	var out []summaryItem
	seen := map[string]bool{}
	add := func(f schema.Field, name string) {
		if msg := p.Errors[f.Pointer]; msg != "" && !seen[f.Pointer] {
			seen[f.Pointer] = true
			out = append(out, summaryItem{Href: "#" + FieldID(p.RunUUID, f.Pointer), Text: name + ": " + msg})
		}
	}
	var walk func(list []schema.Field, prefix string)
	walk = func(list []schema.Field, prefix string) {
		for _, f := range list {
			add(f, prefix+f.Label)
			walk(f.Children, prefix)
			if f.Kind != schema.KindRows {
				continue
			}
			for i := range p.rowCount(f) {
				row := f.Row(i)
				add(row, prefix+f.Label+", "+row.Label)
				walk(row.Children, prefix+f.Label+", "+row.Label+", ")
			}
		}
	}
	walk(p.Fields, "")
	var rest []string
	for ptr, msg := range p.Errors {
		if !seen[ptr] && msg != "" {
			rest = append(rest, msg)
		}
	}
	slices.Sort(rest)
	if p.FormError != "" {
		rest = append(rest, p.FormError)
	}
	for _, msg := range rest {
		out = append(out, summaryItem{Href: "#" + p.formID(), Text: msg})
	}
	return out
}

func (p InputFormProps) hasErrors() bool {
	if p.FormError != "" {
		return true
	}
	for _, msg := range p.Errors {
		if msg != "" {
			return true
		}
	}
	return false
}

// anyRequired reports whether any field shows the * mark, so the form explains it.
func (p InputFormProps) anyRequired() bool {
	var walk func([]schema.Field) bool
	walk = func(list []schema.Field) bool {
		for _, f := range list {
			if (f.Required && f.Kind != schema.KindBoolean) || walk(f.Children) {
				return true
			}
			if f.Kind == schema.KindRows && p.rowCount(f) > 0 && walk(f.Item.Children) {
				return true
			}
		}
		return false
	}
	return walk(p.Fields)
}

func (p InputFormProps) formID() string { return InputFormID(p.RunUUID) }

func groupNoteID(f formField) string {
	if f.groupNote() == "" {
		return ""
	}
	return f.ID + "-note"
}

func joinIDs(ids ...string) string {
	var kept []string
	for _, id := range ids {
		if id != "" {
			kept = append(kept, id)
		}
	}
	return strings.Join(kept, " ")
}

// textareaRows sizes a text area to its kind and content.
func textareaRows(f formField) string {
	rows := 4
	if f.Kind == schema.KindJSON {
		rows = 6
	}
	if n := strings.Count(f.value(), "\n") + 2; n > rows {
		rows = min(n, 20)
	}
	return strconv.Itoa(rows)
}

// submitLabel is the submit button's text.
func (p InputFormProps) submitLabel() string {
	switch {
	case p.SubmitLabel != "":
		return p.SubmitLabel
	case p.confirmation():
		return "Confirm"
	}
	return "Submit input"
}

// confirmation reports whether the form answers a remote server's request for no field.
func (p InputFormProps) confirmation() bool {
	return p.Elicitation != nil && p.Elicitation.Confirmation
}

// cancelLabel is the text of the button that cancels a remote server's request.
func (p InputFormProps) cancelLabel() string {
	if p.confirmation() {
		return "Cancel"
	}
	return "Cancel request"
}
