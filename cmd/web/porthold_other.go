//go:build !linux

package main

// portHolder cannot tell which process listens on addr on this system.
func portHolder(string) (string, bool) { return "", false }
