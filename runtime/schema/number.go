package schema

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// maxNumberLen bounds the length of any number literal accepted in a schema, a form or data.
const maxNumberLen = 400

// maxExponent bounds the decimal exponent of a number literal; exact arithmetic on larger
// exponents (which the validator performs) costs tens of milliseconds per number.
const maxExponent = 400

// jsonNumberRE is the JSON number grammar (RFC 8259, section 6).
var jsonNumberRE = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$`)

// humanNumberRE is what a person may type into a number field: an optional sign, digits with
// an optional decimal point (leading zeros and a bare leading or trailing point allowed), and
// an optional exponent.
var humanNumberRE = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// numberInRange reports whether lit is a JSON number literal that is at most maxNumberLen
// long, has an exponent of magnitude at most maxExponent, and does not overflow float64.
func numberInRange(lit string) bool {
	if len(lit) > maxNumberLen || !jsonNumberRE.MatchString(lit) {
		return false
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		digits := strings.TrimLeft(strings.TrimLeft(lit[i+1:], "+-"), "0")
		if len(digits) > 4 {
			return false
		}
		if digits != "" {
			e, err := strconv.Atoi(digits)
			if err != nil || e > maxExponent {
				return false
			}
		}
	}
	_, err := strconv.ParseFloat(lit, 64)
	return err == nil
}

// parseHumanNumber turns what a person typed into a canonical JSON number literal that keeps
// every typed digit ("+007.50" → "7.50", ".5" → "0.5", "1." → "1"). ok is false for anything
// that is not a number or is out of range.
func parseHumanNumber(s string) (lit string, ok bool) {
	s = strings.TrimSpace(s)
	if len(s) > maxNumberLen || !humanNumberRE.MatchString(s) {
		return "", false
	}
	neg := false
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg = true
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(whole)
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	if exp != "" {
		b.WriteByte('e')
		b.WriteString(exp)
	}
	lit = b.String()
	if !numberInRange(lit) {
		return "", false
	}
	return lit, true
}

// parseHumanInteger is parseHumanNumber for whole numbers: "12" → "12", "1e3" → "1000",
// "12.0" → "12"; a value with a fractional part ("12.5") is refused, never truncated.
func parseHumanInteger(s string) (lit string, ok bool) {
	lit, ok = parseHumanNumber(s)
	if !ok {
		return "", false
	}
	r, ok := new(big.Rat).SetString(lit)
	if !ok || !r.IsInt() {
		return "", false
	}
	return r.Num().String(), true
}

// ratString renders r as an exact decimal when that is short, else in float64 notation.
func ratString(r *big.Rat) string {
	if r == nil {
		return ""
	}
	if r.IsInt() {
		if s := r.Num().String(); len(s) <= 24 {
			return s
		}
		f, _ := r.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if digits, ok := decimalDigits(r.Denom()); ok && digits <= 24 {
		s := strings.TrimRight(r.FloatString(digits), "0")
		if len(s) <= 32 {
			return s
		}
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// decimalDigits returns how many fractional digits 1/d needs, when d has no prime factors
// other than 2 and 5 (always true for a number written in decimal).
func decimalDigits(d *big.Int) (int, bool) {
	n := new(big.Int).Set(d)
	two, five, zero := big.NewInt(2), big.NewInt(5), new(big.Int)
	var twos, fives int
	mod := new(big.Int)
	for n.Cmp(big.NewInt(1)) > 0 && twos <= 2*maxExponent {
		if mod.Mod(n, two).Cmp(zero) != 0 {
			break
		}
		n.Quo(n, two)
		twos++
	}
	for n.Cmp(big.NewInt(1)) > 0 && fives <= 2*maxExponent {
		if mod.Mod(n, five).Cmp(zero) != 0 {
			break
		}
		n.Quo(n, five)
		fives++
	}
	if n.Cmp(big.NewInt(1)) != 0 {
		return 0, false
	}
	return max(twos, fives), true
}

// ratFloat converts r to a *float64, or nil when r is nil.
func ratFloat(r *big.Rat) *float64 {
	if r == nil {
		return nil
	}
	f, _ := r.Float64()
	return &f
}
