// Package buildcheck has no code; its tests check that the build files at
// the repository root (templ.yaml, Makefile) agree with go.mod.
package buildcheck
