// Package buildcheck has no code; its tests check that the build files at
// the repository root (templ.yaml, Makefile) agree with go.mod, that no
// comment cites a numbered section or transition of an outside document,
// that the layers depend only downwards (runtime on none of db, handlers and
// views; handlers and views not on db), and that only package app wires the
// application, and that relative links in the Markdown files resolve.
package buildcheck
