package handlers

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime/schema"
)

// routeRunInput is the input form's route. Its schema fields report text that is not text
// themselves (422 with the field's error), so formText leaves that route to them.
const routeRunInput = "/runs/:uuid/input"

// formText refuses a posted form with a field name or value that is not text (invalid UTF-8,
// a NUL character) with 400 naming the field, before any handler reads it: browsers never
// send such bytes, and storing them would silently turn them into U+FFFD.
func formText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method != http.MethodPost || c.Path() == routeRunInput {
			return next(c)
		}
		form, err := c.FormParams()
		if err != nil {
			return bodyReadError(err)
		}
		names := make([]string, 0, len(form))
		for name := range form {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !schema.IsText(name) {
				return notText("A form field name is not valid text (it holds invalid UTF-8 or a NUL character).")
			}
			for _, v := range form[name] {
				if !schema.IsText(v) {
					return notText(fmt.Sprintf("The form field %s is not valid text (it holds invalid UTF-8 or a NUL character).", strconv.Quote(name)))
				}
			}
		}
		return next(c)
	}
}

func notText(text string) error {
	return publicError(http.StatusBadRequest, "bad_text", text+" Nothing was saved; go back, type it again and send the form once more.")
}
