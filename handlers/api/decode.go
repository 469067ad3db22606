package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime/strictjson"
)

// decodeBody reads the request body as one JSON object into v, refusing: a body over the
// limit (413), a Content-Type other than application/json when there is a body (415), an
// empty body unless emptyOK (400), malformed JSON, a key given twice, a key that is not
// exactly one of v's fields (case variants included), text that is not valid UTF-8, wrongly
// typed fields and trailing data (400). Messages name at most the keys sent, never a value.
func (a *API) decodeBody(c echo.Context, v any, emptyOK bool) error {
	r := c.Request()
	if r.ContentLength > a.maxBody {
		return tooLarge()
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, a.maxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return tooLarge()
	case err != nil:
		return invalid("the request body could not be read")
	case len(body) == 0 && emptyOK:
		return nil
	case !isJSON(r.Header.Get(echo.HeaderContentType)):
		return apiError(http.StatusUnsupportedMediaType, "unsupported_media_type", "send the request body as application/json")
	case len(body) == 0:
		return invalid("the request body is empty; send a JSON object")
	}
	if err := strictjson.Decode(body, v); err != nil {
		return decodeError(err)
	}
	return nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == echo.MIMEApplicationJSON
}

func decodeError(err error) error {
	var strictErr *strictjson.Error
	if errors.As(err, &strictErr) {
		return invalid(strictErr.Error())
	}
	if errors.Is(err, strictjson.ErrTrailingData) {
		return invalid("the request body must hold exactly one JSON object")
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return invalid(fmt.Sprintf("field %q has the wrong type", typeErr.Field))
	}
	if errors.As(err, &typeErr) {
		return invalid("the request body must be a JSON object")
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return invalid("the request body is not valid JSON")
	}
	return invalid("the request body has a field this endpoint does not accept, or is not a JSON object")
}

func invalid(message string) *problem {
	return apiError(http.StatusBadRequest, "invalid_request", message)
}

func tooLarge() *problem {
	return apiError(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is too large")
}
