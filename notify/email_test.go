package notify_test

import (
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"runsdesk/notify"
	"runsdesk/runtime"
)

// mailbox is a real SMTP server (go-smtp) on loopback that accepts AUTH PLAIN for
// desk/hunter2 and records every message with whether it arrived over TLS.
type mailbox struct {
	mu       sync.Mutex
	messages []delivered
	addr     string
}

type delivered struct {
	from    string
	to      []string
	data    []byte
	tls     bool
	authed  string
	authTLS bool
}

type mailSession struct {
	box  *mailbox
	conn *smtp.Conn
	cur  delivered
}

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "desk" || pass != "hunter2" {
			return errors.New("bad credentials")
		}
		_, s.cur.authTLS = s.conn.TLSConnectionState()
		s.cur.authed = user
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.cur.from = from
	_, s.cur.tls = s.conn.TLSConnectionState()
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.to = append(s.cur.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = b
	s.box.mu.Lock()
	s.box.messages = append(s.box.messages, s.cur)
	s.box.mu.Unlock()
	return nil
}

func (s *mailSession) Reset()        { s.cur = delivered{authed: s.cur.authed, authTLS: s.cur.authTLS} }
func (s *mailSession) Logout() error { return nil }

// newMailbox starts the server; with cert it offers STARTTLS (implicit TLS when implicit).
func newMailbox(t *testing.T, cert *tls.Certificate, implicit bool) *mailbox {
	t.Helper()
	box := &mailbox{}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &mailSession{box: box, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	var ln net.Listener
	var err error
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cert != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}}
		if implicit {
			ln = tls.NewListener(ln, srv.TLSConfig)
		}
	}
	box.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return box
}

func (b *mailbox) received() []delivered {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]delivered(nil), b.messages...)
}

// TestEmailOverSTARTTLS: an email rule sends, over STARTTLS with AUTH only after it, a
// multipart text + HTML message with the subject, the deep link and who may act, to every
// recipient, from --smtp-from, with the notification's id as Message-ID.
func TestEmailOverSTARTTLS(t *testing.T) {
	cert, roots := testCertificate(t)
	box := newMailbox(t, &cert, false)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelEmail,
		To: []string{"finance@example.com", "ops@example.com"}})
	run := d.wait(t)
	mailer, err := notify.NewMailer("smtp://desk:hunter2@"+box.addr, "Runs desk <desk@example.com>", &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.dispatcher(&clock{now: t0}, nil, nil, mailer).Pass(t.Context()); err != nil || n != 1 {
		t.Fatalf("Pass: %d, %v", n, err)
	}
	ns := d.notifications(t, run.UID)
	if ns[0].State != runtime.NotificationSent {
		t.Fatalf("row %+v", ns[0])
	}
	got := box.received()
	if len(got) != 1 {
		t.Fatalf("%d messages, want 1", len(got))
	}
	m := got[0]
	if !m.tls || !m.authTLS || m.authed != "desk" || m.from != "desk@example.com" ||
		strings.Join(m.to, ",") != "finance@example.com,ops@example.com" {
		t.Fatalf("envelope: %+v", m)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(m.data)))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil || subject != "[runsdesk] Refund assistant waits for your input" {
		t.Fatalf("subject %q, %v", subject, err)
	}
	if got, want := msg.Header.Get("Message-ID"), "<"+ns[0].MessageID()+"@runsdesk>"; got != want {
		t.Fatalf("Message-ID %q, want %q", got, want)
	}
	if msg.Header.Get("From") != `"Runs desk" <desk@example.com>` || msg.Header.Get("To") != "finance@example.com, ops@example.com" {
		t.Fatalf("From %q To %q", msg.Header.Get("From"), msg.Header.Get("To"))
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/alternative" {
		t.Fatalf("Content-Type %q, %v", msg.Header.Get("Content-Type"), err)
	}
	parts := map[string]string{}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		typ, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts[typ] = string(b)
	}
	link := "https://desk.example/runs/" + run.UUID
	for _, typ := range []string{"text/plain", "text/html"} {
		body := parts[typ]
		for _, want := range []string{"Refund assistant waits for your input", link, "Admins and reviewers may act on it", run.UUID, "ask_refund_amount"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s part lacks %q:\n%s", typ, want, body)
			}
		}
	}
	if !strings.Contains(parts["text/html"], `<a href="`+link+`">Open the run</a>`) {
		t.Errorf("html part has no link to the run:\n%s", parts["text/html"])
	}
}

// TestEmailImplicitTLS: smtps:// speaks TLS from the first byte.
func TestEmailImplicitTLS(t *testing.T) {
	cert, roots := testCertificate(t)
	box := newMailbox(t, &cert, true)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelEmail,
		To: []string{"finance@example.com"}})
	d.wait(t)
	mailer, err := notify.NewMailer("smtps://desk:hunter2@"+box.addr, "desk@example.com", &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.dispatcher(&clock{now: t0}, nil, nil, mailer).Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := box.received(); len(got) != 1 || !got[0].tls || got[0].authed != "desk" {
		t.Fatalf("received %+v", got)
	}
}

// TestEmailRefusesCleartext: a server without STARTTLS gets no credentials and no message;
// the row is retried with a reason that does not quote the password.
func TestEmailRefusesCleartext(t *testing.T) {
	box := newMailbox(t, nil, false)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelEmail,
		To: []string{"finance@example.com"}})
	run := d.wait(t)
	mailer, err := notify.NewMailer("smtp://desk:hunter2@"+box.addr, "desk@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.dispatcher(&clock{now: t0}, nil, nil, mailer).Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := d.notifications(t, run.UID)[0]
	if n.State != runtime.NotificationPending || n.LastError != "SMTP: the server offers no STARTTLS; refusing to send in clear" {
		t.Fatalf("row %+v", n)
	}
	if len(box.received()) != 0 {
		t.Fatal("a message went out in clear")
	}
}

// TestNewMailerRefusesBadSettings: the URL scheme, host and sender are checked, and no error
// quotes the password.
func TestNewMailerRefusesBadSettings(t *testing.T) {
	for _, c := range []struct{ url, from string }{
		{"http://u:secretpw@host", "a@example.com"},
		{"smtp://u:secretpw@", "a@example.com"},
		{"smtp://u:secretpw@host", "not an address"},
		{"smtp://u:secretpw@host:bad port", "a@example.com"},
	} {
		_, err := notify.NewMailer(c.url, c.from, nil)
		if err == nil || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("NewMailer(%q, %q): %v", c.url, c.from, err)
		}
	}
}
