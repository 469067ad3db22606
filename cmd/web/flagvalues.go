package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// autoSwitch is a switch that may be left to the command to decide: a bare --name or
// --name=true turns it on, --name=false off, auto (or nothing) leaves it to on's argument.
type autoSwitch struct{ value string }

// on is the switch's state, auto when it was left to auto.
func (s *autoSwitch) on(auto bool) bool {
	if s.value == "auto" {
		return auto
	}
	return s.value == "true"
}

// String is the switch's value: true, false or auto.
func (s *autoSwitch) String() string { return s.value }

// Set reads true, false (and their strconv.ParseBool spellings) or auto.
func (s *autoSwitch) Set(v string) error {
	if v == "auto" {
		s.value = v
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true, false or auto", v)
	}
	s.value = strconv.FormatBool(b)
	return nil
}

// IsBoolFlag lets the switch be given bare, as --name.
func (s *autoSwitch) IsBoolFlag() bool { return true }

// Auto binds a switch whose default (auto) the command decides.
func (b *binder) Auto(p *autoSwitch, name string) {
	s := b.row(name)
	v, from := b.initial(s)
	if err := p.Set(v); err != nil {
		b.errs = append(b.errs, fmt.Errorf("%s: %w", from, err))
	}
	b.fs.Var(p, name, b.usage(s))
}

// choice is a text flag that takes one of a few values.
type choice struct {
	p       *string
	choices []string
}

// String is the flag's value.
func (c choice) String() string {
	if c.p == nil {
		return ""
	}
	return *c.p
}

// Set takes v when it is one of the choices.
func (c choice) Set(v string) error {
	if !slices.Contains(c.choices, v) {
		return fmt.Errorf("want %s", orList(c.choices))
	}
	*c.p = v
	return nil
}

// Choice binds a text flag that takes one of choices.
func (b *binder) Choice(p *string, name string, choices ...string) {
	s := b.row(name)
	v, from := b.initial(s)
	c := choice{p: p, choices: choices}
	if err := c.Set(v); err != nil {
		b.errs = append(b.errs, fmt.Errorf("%s: %q: %w", from, v, err))
	}
	b.fs.Var(c, name, b.usage(s))
}

// orList writes words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
