package main

import (
	"io"
	"log/slog"
	"os"
)

// isTerminal reports whether w is a terminal: a file that is a character device other than
// the null device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}

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
