package views

// NewRunForm is the state of the start-a-run form: the configurations to choose from, the
// values as typed, and the errors by field ("configuration", "prompt").
type NewRunForm struct {
	Configurations []Option
	Configuration  string
	Prompt         string
	Errors         map[string]string
	MaxPrompt      int
}

// Summary returns the form's errors in field order, for ErrorSummary.
func (f NewRunForm) Summary() []SummaryItem {
	var out []SummaryItem
	for _, name := range []string{"configuration", "prompt"} {
		if msg := f.Errors[name]; msg != "" {
			out = append(out, SummaryItem{FieldID: "run-" + name, Text: msg})
		}
	}
	return out
}
