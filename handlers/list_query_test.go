package handlers

import "testing"

// FuzzParseCursor: a cursor parseCursor accepts is written back by String as one it reads the
// same, its time is never negative and its uid always positive; "" is the first page.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"", "0-1", "1700000000-42", "-1-1", "1-0", "+1-2", "1-", "x-y", "9223372036854775807-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCursor(s)
		if err != nil {
			return
		}
		if s == "" {
			if c != (cursor{}) {
				t.Fatalf("parseCursor(\"\") = %+v", c)
			}
			return
		}
		if c.at < 0 || c.uid <= 0 {
			t.Fatalf("parseCursor(%q) = %+v", s, c)
		}
		back, err := parseCursor(c.String())
		if err != nil || back != c {
			t.Fatalf("parseCursor(%q) = %+v, written %q, read back %+v, %v", s, c, c.String(), back, err)
		}
	})
}
