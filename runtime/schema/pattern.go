package schema

import "strings"

// htmlPattern converts a JSON Schema pattern (an unanchored search, compiled by Go's regexp)
// into the value of an HTML pattern attribute (anchored to the whole value, compiled by the
// browser as a JavaScript regular expression with the v flag). It returns "" unless src sticks
// to a subset both engines read the same way: literals, ".", anchors, alternation, groups and
// non-capturing groups, the quantifiers ? * + {n} {n,} {n,m} (lazy or not), the escapes
// \d \D \w \W \s \S \b \B \n \r \t \f \v \xHH and escaped punctuation, and simple character
// classes. Anything else (flags, named groups, \p, \Q, \z, POSIX classes…) is dropped; the
// server-side validation still applies it.
func htmlPattern(src string) string {
	if src == "" || len(src) > 1000 {
		return ""
	}
	sc := patternScanner{src: []rune(src)}
	if !sc.scan() {
		return ""
	}
	if sc.anchoredWhole() {
		return string(sc.src[1 : len(sc.src)-1])
	}
	return ".*(?:" + src + ").*"
}

type patternScanner struct {
	src []rune
	pos int
	// topAlternation is set when a "|" appears outside every group.
	topAlternation bool
	// lastAnchor is the index of the final "$" when it is an anchor, else -1.
	lastAnchor int
}

const syntaxChars = `^$\.*+?()[]{}|/`

// classReserved are the characters the v flag reserves inside a class, doubled or alone.
const classSyntax = `()[]{}/-\|`
const classDoubled = "&!#$%*+,.:;<=>?@^`~"

func (p *patternScanner) peek(off int) (rune, bool) {
	if p.pos+off < len(p.src) {
		return p.src[p.pos+off], true
	}
	return 0, false
}

func (p *patternScanner) scan() bool {
	depth := 0
	p.lastAnchor = -1
	quantifiable := false
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.lastAnchor = -1
		switch c {
		case '\\':
			n, _ := p.peek(1)
			if _, ok := p.escapeSingle(false); !ok {
				return false
			}
			quantifiable = n != 'b' && n != 'B'
			continue
		case '[':
			if !p.class() {
				return false
			}
			quantifiable = true
			continue
		case '(':
			if n, _ := p.peek(1); n == '?' {
				if n2, _ := p.peek(2); n2 != ':' {
					return false
				}
				p.pos += 2
			}
			depth++
			quantifiable = false
		case ')':
			if depth == 0 {
				return false
			}
			depth--
			quantifiable = true
		case '|':
			if depth == 0 {
				p.topAlternation = true
			}
			quantifiable = false
		case '{':
			if !quantifiable || !p.braces() {
				return false
			}
			quantifiable = false
			if n, _ := p.peek(0); n == '?' {
				p.pos++
			}
			continue
		case '}', ']':
			return false
		case '*', '+', '?':
			if !quantifiable {
				return false
			}
			quantifiable = false
			if n, _ := p.peek(1); n == '?' {
				p.pos++
			}
		case '$':
			if depth == 0 {
				p.lastAnchor = p.pos
			}
			quantifiable = false
		case '^':
			quantifiable = false
		default:
			if c < 0x20 || c == 0x7f {
				return false
			}
			quantifiable = true
		}
		p.pos++
	}
	return depth == 0
}

// braces consumes a {n}, {n,} or {n,m} quantifier starting at p.pos.
func (p *patternScanner) braces() bool {
	i := p.pos + 1
	digits := func() int {
		start := i
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
		return i - start
	}
	if digits() == 0 {
		return false
	}
	if i < len(p.src) && p.src[i] == ',' {
		i++
		digits()
	}
	if i >= len(p.src) || p.src[i] != '}' {
		return false
	}
	p.pos = i + 1
	return true
}

// escapeSingle consumes a backslash escape at p.pos; inClass selects the class rules. ok
// reports whether the escape is allowed, single whether it stands for exactly one character.
func (p *patternScanner) escapeSingle(inClass bool) (single, ok bool) {
	n, has := p.peek(1)
	if !has {
		return false, false
	}
	switch {
	case strings.ContainsRune("dDwWsS", n):
		p.pos += 2
		return false, true
	case strings.ContainsRune("nrtfv", n):
		p.pos += 2
		return true, true
	case n == 'b' || n == 'B':
		if inClass {
			return false, false
		}
		p.pos += 2
		return false, true
	case n == 'x':
		h1, ok1 := p.peek(2)
		h2, ok2 := p.peek(3)
		if !ok1 || !ok2 || !isHex(h1) || !isHex(h2) {
			return false, false
		}
		p.pos += 4
		return true, true
	case strings.ContainsRune(syntaxChars, n):
		p.pos += 2
		return true, true
	case inClass && (n == '-' || strings.ContainsRune(classDoubled, n)):
		p.pos += 2
		return true, true
	}
	return false, false
}

func isHex(r rune) bool {
	return (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')
}

// class consumes a character class starting at p.pos ("[").
func (p *patternScanner) class() bool {
	p.pos++
	if c, _ := p.peek(0); c == '^' {
		p.pos++
	}
	if c, ok := p.peek(0); !ok || c == ']' {
		return false
	}
	prevSingle := false
	rangeOpen := false
	var prev rune = -1
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ']':
			if rangeOpen {
				return false
			}
			p.pos++
			return true
		case c == '\\':
			single, ok := p.escapeSingle(true)
			if !ok || (rangeOpen && !single) {
				return false
			}
			if rangeOpen {
				rangeOpen, prevSingle = false, false
			} else {
				prevSingle = single
			}
			prev = -1
			continue
		case c == '-':
			n, _ := p.peek(1)
			if !prevSingle || rangeOpen || n == ']' {
				return false
			}
			rangeOpen = true
			prevSingle = false
		case strings.ContainsRune(classSyntax, c):
			return false
		case c < 0x20 || c == 0x7f:
			return false
		default:
			if c == prev && strings.ContainsRune(classDoubled, c) {
				return false
			}
			if rangeOpen {
				rangeOpen, prevSingle = false, false
			} else {
				prevSingle = true
			}
		}
		prev = c
		p.pos++
	}
	return false
}

// anchoredWhole reports whether the pattern is "^…$" with no alternation outside groups, so
// the HTML attribute (which anchors itself) can take the inside verbatim.
func (p *patternScanner) anchoredWhole() bool {
	n := len(p.src)
	return n >= 2 && p.src[0] == '^' && !p.topAlternation && p.lastAnchor == n-1
}
