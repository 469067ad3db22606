package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// listen opens serve's listener on addr. An address already in use is named with the flag and
// variable that change it and, where the system tells (portHolder), the process holding it.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	held := ""
	if p, ok := portHolder(addr); ok {
		held = " (held by " + p + ")"
	}
	return nil, fmt.Errorf("listen on %s: %w%s; choose another address with --addr or RUNSDESK_ADDR", addr, syscall.EADDRINUSE, held)
}
