package reliability

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// server is one running `runsdesk serve` process.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	stdout syncBuffer
	stderr syncBuffer
	exited chan struct{}
	state  *os.ProcessState
}

// startServe starts `runsdesk serve --no-migrate` on a free loopback port with env plus
// extra, and returns once it says where it serves. It is stopped when the test ends.
func startServe(t *testing.T, bin string, env []string, extra ...string) *server {
	t.Helper()
	s := &server{t: t, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve", "--no-migrate", "--addr", "127.0.0.1:0")
	s.cmd.Env = append(append([]string(nil), env...), extra...)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	go func() {
		_ = s.cmd.Wait()
		s.state = s.cmd.ProcessState
		close(s.exited)
	}()
	t.Cleanup(s.stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve %d stderr (tail):\n%s", s.cmd.Process.Pid, tail(s.stderr.String(), 4000))
		}
	})
	const marker = "serving on "
	ok := eventually(90*time.Second, 20*time.Millisecond, func() bool {
		if s.done() {
			return true
		}
		return strings.Contains(s.stdout.String(), marker)
	})
	out := s.stdout.String()
	i := strings.Index(out, marker)
	if !ok || i < 0 {
		t.Fatalf("serve did not start (exited: %v)\nstdout: %s\nstderr: %s", s.done(), out, tail(s.stderr.String(), 4000))
	}
	url := strings.Fields(out[i+len(marker):])[0]
	s.url = strings.TrimSuffix(url, "/")
	return s
}

func (s *server) done() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// stop ends the process gracefully (SIGTERM), killing it if it does not exit in a minute.
func (s *server) stop() {
	if s.done() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// waitKilled waits (at most a minute) for the process to die and reports whether SIGKILL
// ended it.
func (s *server) waitKilled() bool {
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		return false
	}
	ws, ok := s.state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
