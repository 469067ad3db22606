package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// runHealthcheck asks /healthz of the address serve listens on (--addr, RUNSDESK_ADDR) and
// exits 0 when it answers 200, else 1 with a one-line reason: the container image's
// HEALTHCHECK, which has no curl to do it.
func runHealthcheck(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("healthcheck", "[--addr HOST:PORT] [--timeout D] [flags]")
	var addr string
	var timeout time.Duration
	f.bind.String(&addr, "addr")
	f.bind.Duration(&timeout, "timeout")
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	if timeout <= 0 {
		return f.fail("--timeout must be positive, got %s", timeout)
	}
	url, err := healthURL(addr)
	if err != nil {
		return f.fail("%v", err)
	}
	if err := checkHealth(ctx, url, timeout); err != nil {
		return c.failf("healthcheck", "%v", err)
	}
	fmt.Fprintf(c.stdout, "ok: %s answered 200\n", url)
	return exitOK
}

// healthURL is the /healthz URL of listen address addr (host:port). A wildcard host
// (empty, 0.0.0.0, ::) is asked on 127.0.0.1: Go listens on both families for it.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q is not host:port: %w", addr, err)
	}
	if port == "" || port == "0" {
		return "", fmt.Errorf("--addr %q names no port to ask", addr)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// checkHealth GETs url within timeout, with no proxy and no redirects, and returns nil only
// when it answers 200.
func checkHealth(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health request: %w", err)
	}
	client := &http.Client{
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("ask /healthz (timeout %s): %w", timeout, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %s", url, res.Status)
	}
	return nil
}
