package benchapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"

	"runsdesk/bench/benchenv"
)

// Client is a browser stand-in: its own cookie jar and connection pool, redirects not
// followed. It serves one goroutine at a time: the bodies it returns are its own buffer, valid
// until its next request, so that a load generator running in the measured process does not
// allocate a page's worth of memory per request.
type Client struct {
	base string
	http *http.Client
	csrf string
	body bytes.Buffer
}

var csrfField = regexp.MustCompile(`name="_csrf"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*name="_csrf"`)

// NewClient returns a client of the app at base that is not signed in.
func NewClient(base string) (*Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("benchapp: %w", err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	hc := &http.Client{Jar: jar, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{base: base, http: hc}, nil
}

// Login signs in as username and keeps the session's CSRF token.
func (c *Client) Login(ctx context.Context, username, password string) error {
	_, body, err := c.Get(ctx, "/login")
	if err != nil {
		return err
	}
	tok := csrfOf(body)
	if tok == "" {
		return fmt.Errorf("benchapp: no CSRF token on /login")
	}
	status, _, err := c.PostForm(ctx, "/login", url.Values{"username": {username}, "password": {password}, "_csrf": {tok}})
	if err != nil {
		return err
	}
	if status != http.StatusSeeOther {
		return fmt.Errorf("benchapp: sign in as %s: status %d, want 303", username, status)
	}
	_, body, err = c.Get(ctx, "/account/password")
	if err != nil {
		return err
	}
	if c.csrf = csrfOf(body); c.csrf == "" {
		return fmt.Errorf("benchapp: no CSRF token after signing in")
	}
	return nil
}

// CSRF returns the signed-in session's CSRF token.
func (c *Client) CSRF() string { return c.csrf }

func csrfOf(body []byte) string {
	m := csrfField.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return string(m[1]) + string(m[2])
}

// Get fetches path and returns the status and body (valid until c's next request).
func (c *Client) Get(ctx context.Context, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("benchapp: %w", err)
	}
	return c.do(req)
}

// PostForm posts form to path and returns the status and body (valid until c's next request).
func (c *Client) PostForm(ctx context.Context, path string, form url.Values) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, fmt.Errorf("benchapp: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	return c.do(req)
}

func (c *Client) do(req *http.Request) (int, []byte, error) {
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("benchapp: %s %s: %w", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	c.body.Reset()
	if _, err := c.body.ReadFrom(res.Body); err != nil {
		return res.StatusCode, nil, fmt.Errorf("benchapp: %s %s: %w", req.Method, req.URL.Path, err)
	}
	return res.StatusCode, c.body.Bytes(), nil
}

// SignIn returns n clients signed in as the bench admin, each with its own session, on the
// apps at bases in turn (client i on bases[i % len(bases)]).
func SignIn(ctx context.Context, bases []string, n int) ([]*Client, error) {
	return SignInAs(ctx, bases, n, benchenv.Users[0].Name)
}

// SignInAs is SignIn as the bench user named username.
func SignInAs(ctx context.Context, bases []string, n int, username string) ([]*Client, error) {
	clients := make([]*Client, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			c, err := NewClient(bases[i%len(bases)])
			if err == nil {
				err = c.Login(ctx, username, benchenv.Password)
			}
			clients[i], errs[i] = c, err
		})
	}
	wg.Wait()
	return clients, errors.Join(errs...)
}

// StartOn is Start on database name of the server serverDSN names (its database part is
// replaced): an app on another node of a cluster, for instance.
func StartOn(ctx context.Context, o Options, serverDSN, name string) (*App, error) {
	cfg, err := mysql.ParseDSN(serverDSN)
	if err != nil {
		return nil, fmt.Errorf("benchapp: DSN %q: %w", serverDSN, err)
	}
	cfg.DBName = name
	o.DSN = cfg.FormatDSN()
	return Start(ctx, o)
}
