package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tcpListen is the st column of /proc/net/tcp for a listening socket.
const tcpListen = "0A"

// portHolder names the process listening on addr's port, as "NAME, pid N", from the socket
// tables in /proc/net and the descriptors in /proc/PID/fd. It is best effort: ok is false when
// the port is not found, or the holder is a process this user may not inspect.
func portHolder(addr string) (string, bool) {
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	port, err := net.LookupPort("tcp", portText)
	if err != nil || port == 0 {
		return "", false
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeningInodes(table, port, inodes)
	}
	if len(inodes) == 0 {
		return "", false
	}
	return socketOwner(inodes)
}

// listeningInodes adds to inodes the inode of every socket of table listening on port.
func listeningInodes(table string, port int, inodes map[string]bool) {
	f, err := os.Open(table)
	if err != nil {
		return
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && fields[3] == tcpListen && strings.HasSuffix(fields[1], want) && fields[9] != "0" {
			inodes[fields[9]] = true
		}
	}
}

// socketOwner names the first process with a descriptor on one of the socket inodes.
func socketOwner(inodes map[string]bool) (string, bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return "", false
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return fmt.Sprintf("%s, pid %d", processName(pid), pid), true
			}
		}
	}
	return "", false
}

// processName is the command name of pid, or "a process" when it cannot be read.
func processName(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if name := strings.TrimSpace(string(b)); err == nil && name != "" {
		return name
	}
	return "a process"
}
