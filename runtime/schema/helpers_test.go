package schema

import (
	"fmt"
	"testing"
)

func assertErrors(t testing.TB, got, want []FieldError) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("errors:\n got  %q\n want %q", got, want)
	}
}
