package schema

import (
	"math/big"
	"testing"
)

func TestNumberInRange(t *testing.T) {
	for lit, want := range map[string]bool{
		"0": true, "-1.5": true, "1e308": true, "1e-400": true, "1E+10": true, "1e0300": true,
		"1e401": false, "1e-401": false, "1e309": false, "1e99999": false, "01": false, "1.": false,
		".5": false, "+1": false, "NaN": false, "": false, "1e": false, "0x10": false,
	} {
		if got := numberInRange(lit); got != want {
			t.Errorf("numberInRange(%q) = %v, want %v", lit, got, want)
		}
	}
	long := "1"
	for len(long) <= maxNumberLen {
		long += "0"
	}
	if numberInRange("0." + long) {
		t.Errorf("a %d-character literal is in range", len(long)+2)
	}
}

func TestParseHumanNumber(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"12", "12", true}, {" 12 ", "12", true}, {"+007.50", "7.50", true}, {"-0.5", "-0.5", true},
		{".5", "0.5", true}, {"1.", "1", true}, {"1e3", "1e3", true}, {"-2.5E-3", "-2.5e-3", true},
		{"", "", false}, {"abc", "", false}, {"1,5", "", false}, {"1 000", "", false}, {"0x10", "", false},
		{"Infinity", "", false}, {"NaN", "", false}, {"1e400", "", false}, {"--1", "", false}, {".", "", false},
	}
	for _, tt := range tests {
		got, ok := parseHumanNumber(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseHumanNumber(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseHumanInteger(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"12", "12", true}, {"-3", "-3", true}, {"1e3", "1000", true}, {"12.0", "12", true}, {"1.5e1", "15", true},
		{"123456789012345678901234567890", "123456789012345678901234567890", true},
		{"12.5", "", false}, {"1e-1", "", false}, {"abc", "", false}, {"", "", false},
	}
	for _, tt := range tests {
		got, ok := parseHumanInteger(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseHumanInteger(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRatString(t *testing.T) {
	for in, want := range map[string]string{
		"10": "10", "0.01": "0.01", "-2.5": "-2.5", "1e-7": "0.0000001", "1e30": "1e+30", "1e-40": "1e-40", "0.125": "0.125",
	} {
		r, _ := new(big.Rat).SetString(in)
		if got := ratString(r); got != want {
			t.Errorf("ratString(%s) = %q, want %q", in, got, want)
		}
	}
	if got := ratString(big.NewRat(1, 3)); got != "0.3333333333333333" {
		t.Errorf("ratString(1/3) = %q", got)
	}
	if ratString(nil) != "" {
		t.Error("ratString(nil) is not empty")
	}
}
