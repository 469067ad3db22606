package schema

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ApprovalDigest binds an approval decision to the turn the person reviewed (docs/state-machine.md):
// the lowercase hex SHA-256 of the canonical JSON of pendingCalls. The same turn always gives
// the same digest, whatever the key order of its objects; it is never "".
func ApprovalDigest(pendingCalls any) string {
	return digest(pendingCalls)
}

// InputDigest binds an input submission to the pause the person saw: the lowercase hex
// SHA-256 of the canonical JSON of {"pendingCalls", "inputToolName", "inputSchema"}. It
// changes when any of the three changes and ignores everything else of the suspended state.
// inputSchema is embedded as JSON; if it is not valid JSON the whole value is hashed in its
// fallback form. The result is never "".
func InputDigest(pendingCalls any, inputToolName string, inputSchema json.RawMessage) string {
	if canon, ok := inputCanonicalJSON(pendingCalls, inputToolName, inputSchema); ok {
		return hashHex(canon)
	}
	return digest(map[string]any{
		"pendingCalls":  pendingCalls,
		"inputToolName": inputToolName,
		"inputSchema":   inputSchema,
	})
}

// inputCanonicalJSON is canonicalJSON of InputDigest's object, built from its parts in key
// order with inputSchema read as it is instead of compacted through encoding/json first; ok
// is false when a part does not encode or inputSchema is not one JSON value (canonicalJSON
// then decides).
func inputCanonicalJSON(pendingCalls any, inputToolName string, inputSchema json.RawMessage) ([]byte, bool) {
	sch, ok := canonicalize(inputSchema)
	if !ok {
		return nil, false
	}
	return inputCanonicalJSONOf(pendingCalls, inputToolName, sch)
}

// inputCanonicalJSONOf is inputCanonicalJSON with the schema already canonical (sch).
func inputCanonicalJSONOf(pendingCalls any, inputToolName string, sch []byte) ([]byte, bool) {
	enc, err := json.Marshal(pendingCalls)
	if err != nil {
		return nil, false
	}
	calls, ok := canonicalize(enc)
	if !ok {
		return nil, false
	}
	name, err := json.Marshal(inputToolName)
	if err != nil {
		return nil, false
	}
	obj := make([]byte, 0, len(sch)+len(name)+len(calls)+48)
	obj = append(append(obj, `{"inputSchema":`...), sch...)
	obj = append(append(obj, `,"inputToolName":`...), name...)
	obj = append(append(obj, `,"pendingCalls":`...), calls...)
	return append(obj, '}'), true
}

// DigestEqual compares a presented digest with the expected one in constant time. An empty
// side never matches: a missing digest is a stale one.
func DigestEqual(presented, expected string) bool {
	if presented == "" || expected == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(presented), []byte(expected)) == 1
}

func digest(v any) string {
	return hashHex(canonicalJSON(v))
}

func hashHex(canon []byte) string {
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// canonicalJSON encodes v, decodes it again keeping numbers as written, and encodes the result
// (object keys sorted, invalid UTF-8 replaced by U+FFFD). When v cannot be encoded it returns a
// tagged Go-syntax rendering instead, so a digest is still produced.
func canonicalJSON(v any) []byte {
	first, err := json.Marshal(v)
	if err == nil {
		if out, ok := canonicalize(first); ok {
			return out
		}
		dec := json.NewDecoder(bytes.NewReader(first))
		dec.UseNumber()
		var generic any
		if err = dec.Decode(&generic); err == nil {
			var out []byte
			if out, err = json.Marshal(generic); err == nil {
				return out
			}
		}
	}
	return fmt.Appendf(nil, "runsdesk-digest-fallback:%#v", v)
}

// ValueDigest is the lowercase hex SHA-256 of the canonical JSON of v (object keys sorted,
// numbers as written), the digest ApprovalDigest renders for a turn; never "".
func ValueDigest(v any) string {
	return digest(v)
}

// ToolDigest identifies how a remote server describes one tool: the lowercase hex SHA-256 of
// the canonical JSON of {"description", "inputSchema", "annotations"} (absent JSON as null).
// A tool is applied with its digest and refused at call time when the server's digest differs.
func ToolDigest(description string, inputSchema, annotations json.RawMessage) string {
	orNull := func(raw json.RawMessage) json.RawMessage {
		if len(bytes.TrimSpace(raw)) == 0 || !json.Valid(raw) {
			return json.RawMessage("null")
		}
		return raw
	}
	return digest(map[string]any{"description": description, "inputSchema": orNull(inputSchema), "annotations": orNull(annotations)})
}

// ElicitationDigest binds an answer to a remote server's request for input to the request the
// person saw: InputDigest's parts plus the server's request id, message and request state, so
// a second request on the same call with the same schema is a new form.
func ElicitationDigest(pendingCalls any, inputToolName string, inputSchema json.RawMessage, requestID, message, requestState string) string {
	return digest(map[string]any{
		"input":        InputDigest(pendingCalls, inputToolName, inputSchema),
		"requestId":    requestID,
		"message":      message,
		"requestState": requestState,
	})
}
