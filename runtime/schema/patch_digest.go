package schema

// PatchDigest binds an approval with edits to the turn and the edits the person confirmed:
// the lowercase hex SHA-256 of the canonical JSON of {"edits": edits, "turnDigest":
// turnDigest}, edits being the call id → RFC 6902 patch map. Another turn or another patch
// gives another digest; it is never "".
func PatchDigest(turnDigest string, edits any) string {
	return digest(map[string]any{"edits": edits, "turnDigest": turnDigest})
}
