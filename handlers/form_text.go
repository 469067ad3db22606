package handlers

import (
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime/schema"
)

// routeRunInput is the input form's route. Its schema reports bytes that are not text on the
// field that holds them (422 with that field's error), so formText leaves the route alone.
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
		for _, name := range slices.Sorted(maps.Keys(form)) {
			if !schema.IsText(name) {
				return notText("A form field name is not valid text (it holds invalid UTF-8 or a NUL character).")
			}
			for _, v := range form[name] {
				if !schema.IsText(v) {
					return notText(fieldName(name) + " is not valid text (it holds invalid UTF-8 or a NUL character).")
				}
			}
		}
		return next(c)
	}
}

// maxFieldNameInMessage bounds the field names a message repeats.
const maxFieldNameInMessage = 64

// fieldName names a posted field for a message.
func fieldName(name string) string {
	if len(name) > maxFieldNameInMessage {
		return "A form field"
	}
	return "The form field " + strconv.Quote(name)
}

func notText(text string) error {
	return publicError(http.StatusBadRequest, "bad_text", text+" Nothing was saved; go back, type it again and send the form once more.")
}
