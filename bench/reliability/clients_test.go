package reliability

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// reply is what a client looks at; err is set when no response arrived (a killed server).
type reply struct {
	status   int
	location string
	ctype    string
	body     string
	err      error
}

func do(hc *http.Client, req *http.Request) reply {
	res, err := hc.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, location: res.Header.Get("Location"), ctype: res.Header.Get("Content-Type"), body: string(body), err: err}
}

// person is a browser stand-in signed in as the admin: a cookie jar (cookies are per host,
// not per port, so one session reaches every serve process on 127.0.0.1) and the session's
// CSRF token. Redirects are not followed.
type person struct {
	hc   *http.Client
	csrf string
}

// login signs in at base and reads the session's CSRF token.
func login(t *testing.T, base string) *person {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &person{hc: &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	tok := p.formToken(t, base+"/login")
	r := p.post(base+"/login", url.Values{"username": {adminName}, "password": {adminPassword}, "_csrf": {tok}})
	if r.err != nil || r.status != http.StatusSeeOther {
		t.Fatalf("login at %s: %d %v %.300s", base, r.status, r.err, r.body)
	}
	p.csrf = p.formToken(t, base+"/account/password")
	return p
}

// formToken returns the _csrf value of the page's first form.
func (p *person) formToken(t *testing.T, page string) string {
	t.Helper()
	r := p.get(page)
	if r.err != nil {
		t.Fatalf("GET %s: %v", page, r.err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	tok, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok || tok == "" {
		t.Fatalf("no CSRF token on %s (status %d)", page, r.status)
	}
	return tok
}

func (p *person) get(u string) reply {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return reply{err: err}
	}
	return do(p.hc, req)
}

func (p *person) post(u string, form url.Values) reply {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return reply{err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(p.hc, req)
}

// inputForm is what the input form of a run posts: the CSRF token, the turn digest, the
// idempotency key and the amount field.
func (p *person) inputForm(digest, key, amount string) url.Values {
	return url.Values{"_csrf": {p.csrf}, "turn_digest": {digest}, "idempotency_key": {key}, "input/amount": {amount}}
}

// submitInput posts the input form of run to base.
func (p *person) submitInput(base, run string, form url.Values) reply {
	return p.post(base+"/runs/"+run+"/input", form)
}

// newKey returns a fresh idempotency key, as a form render makes one.
func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// apiClient calls the JSON API with a bearer token.
type apiClient struct {
	token string
	hc    *http.Client
}

func newAPI(token string) *apiClient {
	return &apiClient{token: token, hc: &http.Client{Timeout: time.Minute}}
}

// runJSON is the part of the API's run the tests read.
type runJSON struct {
	UUID              string `json:"uuid"`
	Status            string `json:"status"`
	TerminationReason string `json:"termination_reason"`
	Pending           *struct {
		Kind       string `json:"kind"`
		TurnDigest string `json:"turn_digest"`
		InputTool  string `json:"input_tool"`
	} `json:"pending"`
}

func (a *apiClient) call(method, u string, body any) reply {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{err: err}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return reply{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return do(a.hc, req)
}

// start starts a run of configuration at base and returns its uuid.
func (a *apiClient) start(t *testing.T, base, configuration string) string {
	t.Helper()
	r := a.call(http.MethodPost, base+"/api/v1/runs", map[string]string{"configuration": configuration, "prompt": "please help"})
	var run runJSON
	if r.err != nil || r.status != http.StatusCreated || json.Unmarshal([]byte(r.body), &run) != nil || run.UUID == "" {
		t.Fatalf("start %s: %d %v %.300s", configuration, r.status, r.err, r.body)
	}
	return run.UUID
}

// get reads run at base.
func (a *apiClient) get(base, uuid string) (runJSON, error) {
	r := a.call(http.MethodGet, base+"/api/v1/runs/"+uuid, nil)
	var run runJSON
	if r.err != nil {
		return run, r.err
	}
	if r.status != http.StatusOK {
		return run, fmt.Errorf("GET run: %d %.200s", r.status, r.body)
	}
	return run, json.Unmarshal([]byte(r.body), &run)
}

// waitStatus polls run at base until its status is one of want and returns it.
func (a *apiClient) waitStatus(t *testing.T, base, uuid string, want ...string) runJSON {
	t.Helper()
	var run runJSON
	var err error
	ok := eventually(90*time.Second, 100*time.Millisecond, func() bool {
		run, err = a.get(base, uuid)
		for _, w := range want {
			if err == nil && run.Status == w {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("run %s: status %q (err %v), want one of %v", uuid, run.Status, err, want)
	}
	return run
}

// waitingRun starts a run of configuration at base and waits until it pauses; it returns the
// run with its pending turn.
func (a *apiClient) waitingRun(t *testing.T, base, configuration string) runJSON {
	t.Helper()
	uuid := a.start(t, base, configuration)
	run := a.waitStatus(t, base, uuid, "waiting_for_input", "waiting_for_approval")
	if run.Pending == nil || run.Pending.TurnDigest == "" {
		t.Fatalf("run %s waits without a pending turn", uuid)
	}
	return run
}
