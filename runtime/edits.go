package runtime

import (
	"encoding/json"
	"strings"

	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/schema"
)

// DecodeEdits reads the edits of an approval as a request carries them: a JSON object of
// pending call id → RFC 6902 patch (jsonpatch.Decode). Empty raw is no edits. A document that
// is not such an object, or a patch that does not decode, is InvalidEdit naming the call
// (runUUID names the run), with the reason at pointer "".
func DecodeEdits(runUUID string, raw map[string]json.RawMessage) (map[string]jsonpatch.Patch, *Error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]jsonpatch.Patch, len(raw))
	for id, r := range raw {
		p, err := jsonpatch.Decode(r)
		if err != nil {
			return nil, &Error{Code: CodeInvalidEdit, RunUUID: runUUID, CallID: id, Message: "an edit is not a JSON Patch", Err: err,
				Fields: []schema.FieldError{{Message: strings.TrimPrefix(err.Error(), "json patch: ")}}}
		}
		out[id] = p
	}
	return out, nil
}
