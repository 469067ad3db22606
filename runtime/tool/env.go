package tool

import (
	"errors"
	"strings"
)

var (
	errUnterminatedRef = errors.New("a ${ reference has no closing brace")
	errInvalidRefName  = errors.New("a ${NAME} reference has a name other than letters, digits and _ (not starting with a digit)")
)

// scanRefs returns the names referenced as ${NAME} in v, in order of appearance. A "$" not
// followed by "{" is literal.
func scanRefs(v string) ([]string, error) {
	var names []string
	err := walkRefs(v, func(string) {}, func(name string) { names = append(names, name) })
	return names, err
}

// expandRefs replaces every ${NAME} in v with getenv(NAME). It returns the name of the first
// variable that is unset or empty, and "" with the expanded value otherwise.
func expandRefs(v string, getenv func(string) string) (string, string, error) {
	var b strings.Builder
	missing := ""
	err := walkRefs(v, func(lit string) { b.WriteString(lit) }, func(name string) {
		val := getenv(name)
		if val == "" && missing == "" {
			missing = name
		}
		b.WriteString(val)
	})
	if err != nil || missing != "" {
		return "", missing, err
	}
	return b.String(), "", nil
}

// walkRefs splits v into literal text and ${NAME} references, in order.
func walkRefs(v string, literal, ref func(string)) error {
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			literal(v)
			return nil
		}
		literal(v[:i])
		end := strings.IndexByte(v[i+2:], '}')
		if end < 0 {
			return errUnterminatedRef
		}
		name := v[i+2 : i+2+end]
		if !validEnvName(name) {
			return errInvalidRefName
		}
		ref(name)
		v = v[i+2+end+1:]
	}
}

// validEnvName reports whether name is [A-Za-z_][A-Za-z0-9_]*.
func validEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
