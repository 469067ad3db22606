package mysqld

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// serverSysProcAttr puts the server in its own process group, so a Ctrl-C
// meant for runsdesk does not reach it before Stop does, and asks the kernel
// to send it SIGTERM if runsdesk dies without calling Stop.
func serverSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// looksLikeServer reports whether pid is a mariadbd or mysqld serving
// dataDir, so a pid file left by a crash, whose pid now belongs to another
// program, is seen as stale. Without a readable /proc it only checks that
// the process exists.
func looksLikeServer(pid int, dataDir string) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		if os.IsNotExist(err) {
			return false
		}
		return processAlive(pid)
	}
	args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
	prog := filepath.Base(string(args[0]))
	if prog != "mariadbd" && prog != "mysqld" {
		return false
	}
	for _, a := range args[1:] {
		if string(a) == "--datadir="+dataDir {
			return true
		}
	}
	return false
}
