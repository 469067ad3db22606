package app

import (
	"errors"
	"fmt"
	"time"

	"runsdesk/db"
	"runsdesk/notify"
)

// NotifyConfig configures the notification dispatcher of a process.
type NotifyConfig struct {
	// PublicURL is the base of the links in notifications (--public-url).
	PublicURL string
	// SMTPURL and SMTPFrom are the mail server and sender of email notifications
	// (--smtp-url, --smtp-from); without SMTPURL an email notification fails saying so.
	SMTPURL  string
	SMTPFrom string
	// Interval and Timeout are the dispatcher's polling and per-attempt bound (its defaults
	// apply when zero).
	Interval time.Duration
	Timeout  time.Duration
	// PerHost bounds the deliveries in flight to one destination (--notify-per-host; the
	// dispatcher's default applies when zero).
	PerHost int
}

// newMailer is the mail server of n (nil without --smtp-url); a setting that does not parse
// is an error.
func newMailer(n NotifyConfig) (*notify.Mailer, error) {
	switch {
	case n.SMTPURL != "" && n.SMTPFrom == "":
		return nil, errors.New("app: --smtp-url needs --smtp-from (the sender of notification emails)")
	case n.SMTPURL == "":
		return nil, nil
	}
	mailer, err := notify.NewMailer(n.SMTPURL, n.SMTPFrom, nil)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	return mailer, nil
}

// NewDispatcher builds the notification dispatcher of a process without HTTP (worker): it
// has no /metrics, so it counts nothing; answers reads what callbacks carry (the process's
// runtime). StartWorkers runs it.
func NewDispatcher(cfg Config, answers notify.Answers) (*notify.Dispatcher, error) {
	return newDispatcher(cfg, db.New(cfg.DB), answers, nil)
}

// newDispatcher builds the dispatcher on store, reading callbacks' answers with answers and
// counting outcomes in obs when not nil. A mail server setting that does not parse is an
// error.
func newDispatcher(cfg Config, store *db.Store, answers notify.Answers, obs notify.Observer) (*notify.Dispatcher, error) {
	n := cfg.Notify
	mailer, err := newMailer(n)
	if err != nil {
		return nil, err
	}
	return notify.New(notify.Config{Outbox: store, Catalog: store, PublicURL: n.PublicURL, Mailer: mailer, Getenv: cfg.Getenv,
		Answers: answers, Interval: n.Interval, Timeout: n.Timeout, PerHost: n.PerHost, Observer: obs,
		Logger: logger(cfg).With("component", "notify"), Now: cfg.Now}), nil
}
