package mcptest

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TypeScript is tools/mcp-ts/server.mjs, a real MCP server built with the TypeScript SDK,
// running under node on 127.0.0.1: URL is its endpoint, Answers what its tools were answered.
type TypeScript struct {
	URL string

	mu      sync.Mutex
	answers []string
}

// Answers returns the answers the server's tools got so far, in order, as the JSON it
// printed ({"action", "content"}).
func (s *TypeScript) Answers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.answers...)
}

// StartTypeScript starts the TypeScript SDK server, stopped when tb ends. Without node or
// without tools/mcp-ts/node_modules (npm ci --prefix tools/mcp-ts) the test is skipped, or
// fails when CI is set.
func StartTypeScript(tb testing.TB) *TypeScript {
	tb.Helper()
	out := startNode(tb, "server.mjs", nil)
	s := &TypeScript{}
	listening := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			line := lines.Text()
			switch {
			case strings.HasPrefix(line, "listening "):
				listening <- strings.TrimPrefix(line, "listening ")
			case strings.HasPrefix(line, "answer "):
				s.mu.Lock()
				s.answers = append(s.answers, strings.TrimPrefix(line, "answer "))
				s.mu.Unlock()
			}
		}
	}()
	select {
	case s.URL = <-listening:
	case <-time.After(30 * time.Second):
		tb.Fatal("the TypeScript SDK server did not start listening within 30s")
	}
	return s
}

// TypeScriptClient is tools/mcp-ts/client.mjs, a real MCP client built with the TypeScript
// SDK, running under node: Lines receives every line it prints ("connected <version>",
// "progress <json>", "result <json>") and is closed when it exits.
type TypeScriptClient struct {
	Lines <-chan string
}

// StartTypeScriptClient runs the TypeScript SDK client against the MCP endpoint url with the
// bearer token, calling tool with args (JSON); it is stopped when tb ends, and skipped (or
// failed when CI is set) as StartTypeScript is.
func StartTypeScriptClient(tb testing.TB, url, token, tool, args string) *TypeScriptClient {
	tb.Helper()
	out := startNode(tb, "client.mjs", []string{"RUNSDESK_MCP_URL=" + url, "RUNSDESK_TOKEN=" + token}, tool, args)
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		scan := bufio.NewScanner(out)
		scan.Buffer(make([]byte, 64<<10), 1<<20)
		for scan.Scan() {
			lines <- scan.Text()
		}
	}()
	return &TypeScriptClient{Lines: lines}
}

// startNode runs node on script in tools/mcp-ts with env added and args, stopped when tb
// ends, and returns its standard output. Without node or tools/mcp-ts/node_modules the
// test is skipped, or fails when CI is set.
func startNode(tb testing.TB, script string, env []string, args ...string) io.Reader {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "tools", "mcp-ts")
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node"
	case !exists(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")):
		missing = "tools/mcp-ts/node_modules (run npm ci --prefix tools/mcp-ts --ignore-scripts)"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("the TypeScript SDK is required in CI but %s is missing", missing)
		}
		tb.Skipf("the TypeScript SDK cannot run: %s is missing", missing)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s under node: %v", script, err)
	}
	tb.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
