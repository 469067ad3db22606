package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html/template"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// Mailer sends email through one SMTP server: `smtp://user:pass@host:587` submits over
// STARTTLS (refusing a server without it), `smtps://user:pass@host:465` over implicit TLS.
// Credentials are optional and only ever sent encrypted.
type Mailer struct {
	addr     string
	host     string
	implicit bool
	user     string
	pass     string
	from     mail.Address
	tls      *tls.Config
}

// NewMailer parses rawURL and from (an address, optionally with a name). tlsConfig, when not
// nil, is the TLS configuration to verify the server with (its ServerName is set to the
// URL's host); nil uses the system's roots. Errors never quote the password.
func NewMailer(rawURL, from string, tlsConfig *tls.Config) (*Mailer, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("--smtp-url is not a URL like smtp://user:pass@host:587")
	}
	m := &Mailer{host: u.Hostname()}
	port := u.Port()
	switch u.Scheme {
	case "smtp":
		if port == "" {
			port = "587"
		}
	case "smtps":
		m.implicit = true
		if port == "" {
			port = "465"
		}
	default:
		return nil, errors.New("--smtp-url must start with smtp:// (STARTTLS) or smtps:// (implicit TLS)")
	}
	if m.host == "" {
		return nil, errors.New("--smtp-url has no host")
	}
	if u.User != nil {
		m.user = u.User.Username()
		m.pass, _ = u.User.Password()
	}
	a, err := mail.ParseAddress(from)
	if err != nil {
		return nil, errors.New("--smtp-from is not an email address like desk@example.com")
	}
	m.from = *a
	m.addr = net.JoinHostPort(m.host, port)
	if tlsConfig != nil {
		m.tls = tlsConfig.Clone()
	} else {
		m.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	m.tls.ServerName = m.host
	return m, nil
}

// Send delivers msg (a complete RFC 5322 message) to every address of to, within ctx's
// deadline.
func (m *Mailer) Send(ctx context.Context, to []string, msg []byte) error {
	d := net.Dialer{}
	conn, err := d.DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("SMTP: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if m.implicit {
		tc := tls.Client(conn, m.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			return fmt.Errorf("SMTP TLS: %w", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		return fmt.Errorf("SMTP: %w", err)
	}
	defer c.Close()
	if !m.implicit {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return errors.New("SMTP: the server offers no STARTTLS; refusing to send in clear")
		}
		if err := c.StartTLS(m.tls); err != nil {
			return fmt.Errorf("SMTP STARTTLS: %w", err)
		}
	}
	if m.user != "" {
		if err := c.Auth(smtp.PlainAuth("", m.user, m.pass, m.host)); err != nil {
			return fmt.Errorf("SMTP AUTH: %w", err)
		}
	}
	if err := c.Mail(m.from.Address); err != nil {
		return fmt.Errorf("SMTP MAIL FROM: %w", err)
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt); err != nil {
			return fmt.Errorf("SMTP RCPT TO: %w", err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("SMTP DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("SMTP DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("SMTP DATA: %w", err)
	}
	return c.Quit()
}

var emailHTML = template.Must(template.New("email").Parse(`<!doctype html>
<html><body style="font-family: system-ui, sans-serif; line-height: 1.5">
<p><strong>{{.Summary}}</strong></p>
<table>
<tr><th align="left">Run</th><td><code>{{.Run}}</code></td></tr>
<tr><th align="left">Configuration</th><td>{{.Configuration}}</td></tr>
{{if .Subject}}<tr><th align="left">Subject</th><td>{{.Subject}}</td></tr>{{end}}
{{if .Tool}}<tr><th align="left">Tool</th><td>{{.Tool}}</td></tr>{{end}}
<tr><th align="left">Status</th><td>{{.Status}}</td></tr>
{{if .Reason}}<tr><th align="left">Termination reason</th><td>{{.Reason}}</td></tr>{{end}}
{{if .WaitingSince}}<tr><th align="left">Waiting since</th><td>{{.WaitingSince}}</td></tr>{{end}}
{{if .ExpiresAt}}<tr><th align="left">Expires at</th><td>{{.ExpiresAt}}</td></tr>{{end}}
</table>
{{if .MayAct}}<p>{{.MayAct}}</p>{{end}}
{{if .Output}}<p><strong>Output</strong></p>
<div style="white-space: pre-wrap">{{.Output}}</div>{{end}}
{{if .OutputError}}<p>Output: {{.OutputError}}.</p>{{end}}
<p><a href="{{.Link}}">Open the run</a></p>
</body></html>
`))

// mailHeader is the header block (ending in the blank line) of a message from from to to with
// subject, Message-ID <id@runsdesk>, dated now, followed by the content header lines.
func mailHeader(from mail.Address, to []string, subject, id string, now time.Time, content ...string) string {
	header := []string{
		"From: " + from.String(),
		"To: " + strings.Join(to, ", "),
		"Subject: " + mime.QEncoding.Encode("utf-8", subject),
		"Date: " + now.UTC().Format(time.RFC1123Z),
		"Message-ID: <" + id + "@runsdesk>",
		"MIME-Version: 1.0",
	}
	header = append(header, content...)
	return strings.Join(header, "\r\n") + "\r\n\r\n"
}

// email is the multipart (text and HTML) message of m from from to to, dated now.
func (m message) email(from mail.Address, to []string, id string, now time.Time) ([]byte, error) {
	n := m.n
	var html bytes.Buffer
	view := map[string]string{"Summary": m.summary, "Run": n.RunUUID, "Configuration": n.ConfigurationIdentifier,
		"Tool": n.Tool, "Status": string(n.Status), "MayAct": m.mayAct, "Link": m.link, "Subject": n.Subject,
		"Reason": n.TerminationReason, "Output": m.output(), "OutputError": m.outputError()}
	if n.WaitingSince > 0 {
		view["WaitingSince"] = stamp(n.WaitingSince)
	}
	if n.ExpiresAt > 0 {
		view["ExpiresAt"] = stamp(n.ExpiresAt)
	}
	if err := emailHTML.Execute(&html, view); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	var out bytes.Buffer
	out.WriteString(mailHeader(from, to, m.subject(), id, now, "Content-Type: multipart/alternative; boundary="+mw.Boundary()))
	for _, part := range []struct{ typ, body string }{
		{"text/plain; charset=utf-8", strings.Join(m.lines(), "\r\n") + "\r\n"},
		{"text/html; charset=utf-8", html.String()},
	} {
		w, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {part.typ}, "Content-Transfer-Encoding": {"quoted-printable"}})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(part.body)); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	out.Write(buf.Bytes())
	return out.Bytes(), nil
}
