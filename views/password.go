package views

import (
	"fmt"
	"strings"
)

func newPasswordHelp(minLength int) string {
	return fmt.Sprintf("At least %d characters. A few unrelated words make a good password.", minLength)
}

func describedBy(id, help, errText string) string {
	var ids []string
	if help != "" {
		ids = append(ids, id+"-help")
	}
	if errText != "" {
		ids = append(ids, id+"-error")
	}
	return strings.Join(ids, " ")
}
