package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
)

// isTerminal reports whether w is a terminal: a file that is a character device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// logFormats are the values of --log-format; auto is text on a terminal, json elsewhere.
var logFormats = []string{"auto", "text", "json"}

// textLogs reports whether the command logs as text: --log-format text, or auto with stderr a
// terminal.
func (f *flags) textLogs() bool {
	return f.logFormat == "text" || f.logFormat == "auto" && f.c.terminal(f.c.stderr)
}

// logger returns the command's logger on stderr at --log-level, as text or JSON (textLogs).
func (f *flags) logger() *slog.Logger {
	level, _ := parseLevel(f.logLevel)
	opts := &slog.HandlerOptions{Level: level}
	if f.textLogs() {
		return slog.New(slog.NewTextHandler(f.c.stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(f.c.stderr, opts))
}

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
