package dbtest

import (
	"regexp"
	"strings"
	"testing"
)

func TestDatabaseName(t *testing.T) {
	valid := regexp.MustCompile(`^t_[a-z0-9_]+_[0-9a-f]{12}$`)
	for _, testName := range []string{"TestX", "TestX/sub case #01", strings.Repeat("TestLong", 20), "Ünïcödé/`;DROP"} {
		a, b := databaseName(testName), databaseName(testName)
		if !valid.MatchString(a) || len(a) > 64 || a == b {
			t.Errorf("databaseName(%q) = %q, %q: want distinct names matching %s, at most 64 bytes", testName, a, b, valid)
		}
	}
}
