//go:build unix && !linux

package mysqld

import "syscall"

// serverSysProcAttr puts the server in its own process group, so a Ctrl-C
// meant for runsdesk does not reach it before Stop does.
func serverSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// looksLikeServer reports whether pid is alive; without /proc the program
// and its data dir are not checked.
func looksLikeServer(pid int, _ string) bool {
	return processAlive(pid)
}
