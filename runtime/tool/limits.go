package tool

// DefaultMaxArgumentsBytes bounds the JSON arguments of one call of a tool that sets no bound
// of its own: the model's (a larger call is a tool error told to the model) and a reviewer's
// edited ones.
const DefaultMaxArgumentsBytes = 64 << 10

// MaxArgumentsBytesLimit is the largest bound a tool definition may set on a call's arguments.
const MaxArgumentsBytesLimit = 1 << 20

// ArgumentsLimiter is implemented by a tool with its own bound on a call's arguments.
type ArgumentsLimiter interface{ MaxArgumentsBytes() int }

// MaxArgumentsBytes is the bound on the JSON arguments of one call of t: its own when it
// declares one above 0 (ArgumentsLimiter), else DefaultMaxArgumentsBytes.
func MaxArgumentsBytes(t Tool) int {
	if l, ok := t.(ArgumentsLimiter); ok && l.MaxArgumentsBytes() > 0 {
		return l.MaxArgumentsBytes()
	}
	return DefaultMaxArgumentsBytes
}
