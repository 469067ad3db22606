package benchapp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Child is the application served by a child process of the benchmark, so that /proc gives
// the server's own RSS and CPU, apart from the load clients'.
type Child struct {
	cmd   *exec.Cmd
	stdin io.Closer
	// URL is the child's base URL, http://127.0.0.1:PORT.
	URL string
}

// StartChild runs this program again with args, which must make it call ServeChild, and
// returns once the child printed its URL.
func StartChild(args ...string) (*Child, error) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("benchapp: child: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("benchapp: child: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("benchapp: start the child: %w", err)
	}
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("benchapp: read the child's URL: %w", err)
	}
	return &Child{cmd: cmd, stdin: stdin, URL: strings.TrimSpace(url)}, nil
}

// PID is the child's process id.
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Stop closes the child's standard input, which ends it, and waits for it.
func (c *Child) Stop() error {
	c.stdin.Close()
	return c.cmd.Wait()
}

// ServeChild is the child's side of StartChild: the application started with o, its URL
// printed on standard output, served until standard input closes.
func ServeChild(ctx context.Context, o Options) error {
	a, err := Start(ctx, o)
	if err != nil {
		return err
	}
	fmt.Println(a.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return a.Close()
}
