package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// execMainEnv makes the test binary run main instead of the tests (see TestMain).
const execMainEnv = "RUNSDESK_TEST_EXEC_MAIN"

// process is a runsdesk command in a process group of its own, as a terminal runs it.
type process struct {
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan error
}

// startProcess starts cmd in a new process group with env added to the test's environment,
// collecting stdout and stderr together.
func startProcess(t *testing.T, cmd *exec.Cmd, env environ) *process {
	t.Helper()
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &process{cmd: cmd, output: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	ended := make(chan struct{})
	go func() {
		p.done <- cmd.Wait()
		close(ended)
	}()
	t.Cleanup(func() {
		select {
		case <-ended:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-ended
		}
	})
	return p
}

// waitForOutput waits until the output matches re, failing if the process ends first.
func (p *process) waitForOutput(t *testing.T, re *regexp.Regexp, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for !re.MatchString(p.output.String()) {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("exited (%v) before printing %s:\n%s", err, re, p.output)
		case <-deadline:
			t.Fatalf("never printed %s within %s:\n%s", re, within, p.output)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// signalGroup sends sig to the whole process group and returns the exit code.
func (p *process) signalGroup(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		t.Fatalf("signal the process group: %v", err)
	}
	return p.wait(t)
}

// wait returns the exit code once the process ends (-1 when a signal ended it).
func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.done:
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &exit) && exit.Exited():
			return exit.ExitCode()
		case errors.As(err, &exit):
			t.Logf("ended by a signal: %v", err)
			return -1
		}
		t.Fatalf("wait: %v", err)
	case <-time.After(time.Minute):
		t.Fatalf("still running a minute later:\n%s", p.output)
	}
	return -1
}

func TestServeExitsZeroOnSIGINTAndSIGTERM(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			env := newDatabase(t)
			env[execMainEnv] = "1"
			env["RUNSDESK_LOG_LEVEL"] = "info"
			p := startProcess(t, exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--no-migrate"), env)
			p.waitForOutput(t, regexp.MustCompile(`runsdesk is serving on http://`), time.Minute)
			if code := p.signalGroup(t, sig); code != exitOK {
				t.Errorf("serve exited %d after %s, want 0:\n%s", code, sig, p.output)
			}
			if out := p.output.String(); !strings.Contains(out, `"stopped"`) {
				t.Errorf("serve did not log its graceful stop:\n%s", out)
			}
		})
	}
}

// TestMakeRunStopsCleanlyOnCtrlC runs `make run` on a test database in a terminal (script(1)
// gives it a pseudo-terminal) and types Ctrl-C: make must exit 0 without an "Error" line.
func TestMakeRunStopsCleanlyOnCtrlC(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary: skipped with -short")
	}
	tools := map[string]string{}
	for _, name := range []string{"make", "go", "script"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s is not on PATH", name)
		}
		tools[name] = p
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	env := newDatabase(t)
	env["RUNSDESK_ADDR"] = "127.0.0.1:0"
	cmd := exec.Command(tools["script"], "-qec", tools["make"]+" -C "+root+" run GO="+tools["go"], "/dev/null")
	keys, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, cmd, env)
	p.waitForOutput(t, regexp.MustCompile(`runsdesk demo desk: http://`), 5*time.Minute)
	if _, err := keys.Write([]byte{3}); err != nil {
		t.Fatalf("type Ctrl-C: %v", err)
	}
	code := p.wait(t)
	if out := p.output.String(); code != 0 || strings.Contains(out, "Error") {
		t.Errorf("make run exited %d after Ctrl-C, want 0 and no make error:\n%s", code, lastLines(out, 8))
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	var all []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		all = append(all, sc.Text())
	}
	return strings.Join(all[max(0, len(all)-n):], "\n")
}
