package sso

import (
	"fmt"
	"strings"
)

// claimPath looks up a claim name or dotted path ("groups", "realm_access.roles") in claims
// and returns its values as strings: a list of strings, or a single string. found is false when
// the claim is absent.
func claimPath(claims map[string]any, path string) (values []string, found bool) {
	var cur any = claims
	for part := range strings.SplitSeq(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[part]; !ok {
			return nil, false
		}
	}
	switch v := cur.(type) {
	case string:
		return []string{v}, true
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				values = append(values, s)
			} else {
				values = append(values, fmt.Sprint(e))
			}
		}
		return values, true
	case nil:
		return nil, false
	}
	return []string{fmt.Sprint(cur)}, true
}
