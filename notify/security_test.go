package notify_test

import (
	"crypto/tls"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"

	"runsdesk/notify"
	"runsdesk/runtime"
)

// TestRecoveryCodeMail: the recovery-code alert goes over STARTTLS to the person's address
// alone, says when, from where and how many codes are left, what to do if it was not them,
// and links their two-factor page.
func TestRecoveryCodeMail(t *testing.T) {
	cert, roots := testCertificate(t)
	box := newMailbox(t, &cert, false)
	mailer, err := notify.NewMailer("smtp://desk:hunter2@"+box.addr, "Runs desk <desk@example.com>", &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 9, 30, 0, 0, time.UTC)
	s := notify.NewSecurityMail(mailer, "https://desk.example/", func() time.Time { return at })
	ann := runtime.Actor{UserUID: 7, Name: "ann", Email: "ann@example.com"}
	if err := s.RecoveryCodeUsed(t.Context(), ann, "203.0.113.9", 9); err != nil {
		t.Fatal(err)
	}
	got := box.received()
	if len(got) != 1 || !got[0].tls || strings.Join(got[0].to, ",") != "ann@example.com" || got[0].from != "desk@example.com" {
		t.Fatalf("envelopes %+v; want one to ann over TLS", got)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(got[0].data)))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil || subject != "runsdesk: a recovery code was used to sign in as ann" || msg.Header.Get("To") != "ann@example.com" {
		t.Fatalf("subject %q To %q, %v", subject, msg.Header.Get("To"), err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`account "ann"`, "2026-12-05T09:30:00Z", "203.0.113.9", "9 unused recovery codes", "runsdesk user mfa-reset", "https://desk.example/account/security"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if err := s.RecoveryCodeUsed(t.Context(), runtime.Actor{UserUID: 8, Name: "bob"}, "203.0.113.9", 1); err == nil {
		t.Fatal("a person without an address: no error")
	}
}
