package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime/quotedprintable"
	"strings"
	"time"

	"runsdesk/runtime"
)

// securityMailTimeout bounds one security mail's delivery.
const securityMailTimeout = 10 * time.Second

// SecurityMail tells people by e-mail of security events on their own account (a recovery
// code used to sign in). It is safe for concurrent use.
type SecurityMail struct {
	mailer    *Mailer
	publicURL string
	now       func() time.Time
}

// NewSecurityMail sends through mailer; publicURL (may be empty) is the desk's address the
// message links to; now defaults to time.Now.
func NewSecurityMail(mailer *Mailer, publicURL string, now func() time.Time) *SecurityMail {
	if now == nil {
		now = time.Now
	}
	return &SecurityMail{mailer: mailer, publicURL: strings.TrimSuffix(publicURL, "/"), now: now}
}

// RecoveryCodeUsed mails person (at person.Email) that one of their recovery codes signed in
// from ip, leaving left unused, and what to do if it was not them; it waits at most 10 s for
// the mail server.
func (s *SecurityMail) RecoveryCodeUsed(ctx context.Context, person runtime.Actor, ip string, left int) error {
	if person.Email == "" {
		return fmt.Errorf("notify: user %d has no e-mail address", person.UserUID)
	}
	ctx, cancel := context.WithTimeout(ctx, securityMailTimeout)
	defer cancel()
	now := s.now()
	lines := []string{
		fmt.Sprintf("A recovery code of your runsdesk account %q was used to sign in at %s from %s.", person.Name, stamp(now.Unix()), ip),
		fmt.Sprintf("You have %d unused recovery codes left.", left),
		"",
		"If this was you, nothing more is needed; make new recovery codes when few are left.",
		"If it was not you, tell your administrator at once: they can end your sessions",
		"(runsdesk user end-sessions) and remove your second factor (runsdesk user mfa-reset).",
	}
	if s.publicURL != "" {
		lines = append(lines, "", "Your two-factor settings: "+s.publicURL+"/account/security")
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return fmt.Errorf("notify: security mail: %w", err)
	}
	var body bytes.Buffer
	body.WriteString(mailHeader(s.mailer.from, []string{person.Email}, "runsdesk: a recovery code was used to sign in as "+person.Name,
		hex.EncodeToString(id), now, "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: quoted-printable"))
	qp := quotedprintable.NewWriter(&body)
	if _, err := qp.Write([]byte(strings.Join(lines, "\r\n") + "\r\n")); err != nil {
		return fmt.Errorf("notify: security mail: %w", err)
	}
	if err := qp.Close(); err != nil {
		return fmt.Errorf("notify: security mail: %w", err)
	}
	if err := s.mailer.Send(ctx, []string{person.Email}, body.Bytes()); err != nil {
		return fmt.Errorf("notify: security mail to user %d: %w", person.UserUID, err)
	}
	return nil
}
