package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/db/dbtest"
	"runsdesk/handlers/api/apitest"
)

// fakeModel is an OpenAI-compatible /chat/completions endpoint: it asks for the city
// (with a guess the person's value must replace) until a tool result is in the transcript,
// then answers.
func fakeModel(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-journey" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answered := false
		for _, m := range req.Messages {
			answered = answered || m.Role == "tool"
		}
		msg := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"ask_city","arguments":"{\"city\":\"ModelGuess\",\"note\":\"keep\"}"}}]}`
		if answered {
			msg = `{"role":"assistant","content":"The parcel goes to Berlin."}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":%s,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`, msg)
	}))
}

// toolEndpoint records every call an HTTP tool makes.
type toolEndpoint struct {
	mu    sync.Mutex
	calls []json.RawMessage
}

func (e *toolEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.Header.Get("Authorization") != "Bearer tool-secret" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.calls = append(e.calls, body.Arguments)
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"content":"address confirmed"}`)
}

func (e *toolEndpoint) received() []json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]json.RawMessage(nil), e.calls...)
}

const journeyYAML = `configurations:
  - identifier: parcels
    name: Parcel desk
    provider: {kind: openai, base_url: "%s/v1", model: "test-model", api_key_env: JOURNEY_API_KEY}
    system_prompt: "You route parcels."
    max_iterations: 5
    tools: [ask_city]
tools:
  - name: ask_city
    description: Ask the operator where the parcel goes.
    parameters: {type: object, properties: {city: {type: string}, note: {type: string}}}
    input_schema: {type: object, required: [city], properties: {city: {type: string, title: "Destination city", minLength: 2}}}
    http: {url: "%s/ask-city", headers: {Authorization: "Bearer ${JOURNEY_TOOL_TOKEN}"}, timeout: 5s}
`

// TestNewUserJourney drives the built binary as a new user would: migrate, user add, token
// create, apply a configuration whose model is a local OpenAI-compatible server and whose
// tool is a local HTTP endpoint, start a run through the API, see it wait for input with its
// schema in the API status, submit the form through the UI, and check that the tool received
// exactly the overlaid arguments and the run completed.
func TestNewUserJourney(t *testing.T) {
	t.Parallel()
	bin, dir := buildBinary(t)
	model := fakeModel(t)
	defer model.Close()
	endpoint := &toolEndpoint{}
	tools := httptest.NewServer(endpoint)
	defer tools.Close()
	cfg := filepath.Join(dir, "desk.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(journeyYAML, model.URL, tools.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "RUNSDESK_DSN=" + dbtest.NewDatabase(t),
		"RUNSDESK_LOG_LEVEL=warn", "RUNSDESK_ADDR=" + addr,
		"JOURNEY_API_KEY=sk-journey", "JOURNEY_TOOL_TOKEN=tool-secret",
	}
	const password = "correct horse battery staple 7"
	for _, step := range [][]string{{"migrate"}, {"user", "add", "--username", "olga", "--role", "admin"}, {"apply", "-f", cfg}} {
		stdin := ""
		if step[0] == "user" {
			stdin = password + "\n"
		}
		if r := runBinary(t, bin, env, stdin, step...); r.code != exitOK {
			t.Fatalf("runsdesk %s: exit %d\n%s%s", strings.Join(step, " "), r.code, r.stdout, r.stderr)
		}
	}
	tok := runBinary(t, bin, env, "", "token", "create", "--name", "journey", "--scopes", "run,read")
	token := strings.TrimSpace(tok.stdout)
	if tok.code != exitOK || token == "" {
		t.Fatalf("token create: %+v", tok)
	}

	base := serveBinary(t, bin, env, addr)

	api := apiClient{t: t, base: base, token: token, hc: checkedClient(t)}
	var created struct{ UUID, Status string }
	api.do(http.MethodPost, "/api/v1/runs", `{"configuration":"parcels","prompt":"Where does parcel 7 go?"}`, http.StatusCreated, &created)
	var status struct {
		Status  string `json:"status"`
		Pending *struct {
			Kind        string          `json:"kind"`
			TurnDigest  string          `json:"turn_digest"`
			InputTool   string          `json:"input_tool"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"pending"`
	}
	api.waitFor(created.UUID, "waiting_for_input", &status)
	if status.Pending == nil || status.Pending.Kind != "input" || status.Pending.InputTool != "ask_city" ||
		status.Pending.TurnDigest == "" || !strings.Contains(string(status.Pending.InputSchema), `"Destination city"`) {
		t.Fatalf("waiting run's API status lacks the pending form: %+v", status.Pending)
	}

	ui := newBrowserless(t, base)
	ui.login("olga", password)
	form := ui.form("/runs/"+created.UUID, "/runs/"+created.UUID+"/input")
	form.Set("input/city", "Berlin")
	if code, loc := ui.post("/runs/"+created.UUID+"/input", form); code != http.StatusSeeOther || loc != "/runs/"+created.UUID {
		t.Fatalf("submit: %d Location %q, want 303 to the run page", code, loc)
	}
	api.waitFor(created.UUID, "completed", &status)
	got := endpoint.received()
	if len(got) != 1 {
		t.Fatalf("tool endpoint called %d times, want 1", len(got))
	}
	var args, want map[string]any
	_ = json.Unmarshal(got[0], &args)
	_ = json.Unmarshal([]byte(`{"city":"Berlin","note":"keep"}`), &want)
	if !reflect.DeepEqual(args, want) {
		t.Fatalf("tool received %s, want exactly the overlay {city: Berlin, note: keep}", got[0])
	}
}

// serveBinary starts `bin serve` with env listening on addr, stopped (SIGINT) when t ends, and
// returns its base URL once /healthz answers.
func serveBinary(t *testing.T, bin string, env []string, addr string) string {
	t.Helper()
	serve := exec.Command(bin, "serve")
	serve.Env = env
	stderr, _ := serve.StderrPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(stderr)) }()
	t.Cleanup(func() {
		_ = serve.Process.Signal(os.Interrupt)
		_ = serve.Wait()
	})
	base := "http://" + addr
	waitHealthy(t, base)
	return base
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never became ready", base)
}

// apiClient calls the JSON API with a bearer token, through hc (checkedClient).
type apiClient struct {
	t     *testing.T
	base  string
	token string
	hc    *http.Client
}

// checkedClient is an HTTP client whose calls to the API are checked against its OpenAPI
// document (apitest).
func checkedClient(t *testing.T) *http.Client {
	return &http.Client{Transport: apitest.New().Transport(t, nil)}
}

func (a apiClient) do(method, path, body string, want int, out any) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		a.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

func (a apiClient) waitFor(uuid, status string, out any) {
	a.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var s struct {
			Status string `json:"status"`
		}
		a.do(http.MethodGet, "/api/v1/runs/"+uuid, "", http.StatusOK, &s)
		if s.Status == status {
			a.do(http.MethodGet, "/api/v1/runs/"+uuid, "", http.StatusOK, out)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.t.Fatalf("run %s never reached %s", uuid, status)
}

// browserless is a cookie-jar client that submits the UI's own forms.
type browserless struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowserless(t *testing.T, base string) *browserless {
	jar, _ := cookiejar.New(nil)
	return &browserless{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// form loads page and returns the fields of the form whose action is action.
func (b *browserless) form(page, action string) url.Values {
	b.t.Helper()
	resp, err := b.c.Get(b.base + page)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	sel := doc.Find(fmt.Sprintf(`form[action=%q]`, action))
	if sel.Length() == 0 {
		b.t.Fatalf("%s (%d) has no form posting to %s", page, resp.StatusCode, action)
	}
	v := url.Values{}
	sel.First().Find("input, textarea").Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		typ, _ := s.Attr("type")
		if name == "" || typ == "submit" || ((typ == "checkbox" || typ == "radio") && s.AttrOr("checked", "-") == "-") {
			return
		}
		if s.Is("textarea") {
			v.Add(name, s.Text())
			return
		}
		v.Add(name, s.AttrOr("value", ""))
	})
	return v
}

func (b *browserless) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	resp, err := b.c.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

func (b *browserless) login(username, password string) {
	b.t.Helper()
	form := b.form("/login", "/login")
	form.Set("username", username)
	form.Set("password", password)
	if code, _ := b.post("/login", form); code != http.StatusSeeOther {
		b.t.Fatalf("login as %s: %d, want 303", username, code)
	}
}
