// Package notify delivers the notifications of the transactional outbox: a Dispatcher in
// every serve and worker process claims due rows with a lease, sends each through its
// channel (a Standard Webhooks webhook, an email over SMTP, a Slack incoming webhook, an
// external request's signed callback) at
// least once under a stable message id, and retries failures with exponential backoff and
// jitter until they are sent or given up (failed).
package notify

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"runsdesk/runtime"
)

// Outbox is the store of notifications a Dispatcher delivers. Every method but
// ClaimNotifications is guarded by the claim's owner and returns runtime.ErrGuard when the
// claim lapsed and another dispatcher took the row.
type Outbox interface {
	// ClaimNotifications claims up to limit due rows for owner until until (unix seconds),
	// marking blocked, unclaimed, those reach cannot send.
	ClaimNotifications(ctx context.Context, owner string, now, until int64, limit int, reach runtime.NotifyReach) ([]runtime.Notification, error)
	// NotificationSent records a delivery.
	NotificationSent(ctx context.Context, uid int64, owner string, now int64) error
	// NotificationRetry puts the row back, due at dueAt, with the reason of the failure.
	NotificationRetry(ctx context.Context, uid int64, owner string, dueAt int64, reason string, now int64) error
	// NotificationFailed gives the row up with the reason of the last failure.
	NotificationFailed(ctx context.Context, uid int64, owner string, reason string, now int64) error
}

// Catalog lists the configurations, whose rules a Dispatcher checks when it starts.
type Catalog interface {
	Configurations(ctx context.Context) ([]runtime.Configuration, error)
}

// Answers reads what an external request's callback carries: the request's answer as its
// caller would read it (runtime.RequestAnswer), values included, at send time.
type Answers interface {
	CallbackAnswer(ctx context.Context, uuid string) (runtime.RequestAnswer, error)
}

// Observer counts deliveries: outcome is "sent", "retried" or "failed".
type Observer interface {
	ObserveNotification(outcome string)
}

// Defaults of a Dispatcher.
const (
	DefaultInterval    = time.Second
	DefaultTimeout     = 10 * time.Second
	DefaultMaxAttempts = 8
	DefaultBackoff     = 10 * time.Second
	DefaultMaxBackoff  = time.Hour
	DefaultPerHost     = 4
	// batch bounds the rows one pass claims; they are delivered concurrently.
	batch = 16
	// maxInFlight bounds a dispatcher's deliveries in flight, all destinations together.
	maxInFlight = 64
	// leaseFactor: a claim lasts this many attempt timeouts, so a live dispatcher always
	// records its outcome before another may take the row.
	leaseFactor = 3
)

// Config says how a Dispatcher delivers. Outbox is required; the rest default.
type Config struct {
	Outbox Outbox
	// Catalog, when set, is read once at Run's start: each rule this process cannot send is
	// logged as an error.
	Catalog Catalog
	// PublicURL is the base of the links in notifications (--public-url); "" leaves them
	// relative (/runs/UUID).
	PublicURL string
	// Mailer sends email notifications; nil makes each one fail with a reason saying so.
	Mailer *Mailer
	// Answers reads the answers callbacks carry; without it a callback fails its attempt
	// (and is retried) saying so.
	Answers Answers
	// Getenv reads the secrets the rules name, at send time (default os.Getenv).
	Getenv func(string) string
	// Client sends webhooks and Slack messages (default: a client without redirects).
	Client *http.Client
	// Interval is how often the outbox is polled; Timeout bounds one attempt (a claim
	// lasts three); MaxAttempts attempts are made before a row fails; the n-th retry waits
	// Backoff·2^(n-1), at most MaxBackoff, with jitter (between half and all of it).
	// PerHost bounds the deliveries in flight to one destination (a webhook's or Slack
	// URL's host and port, the mail server): its other due rows wait, unclaimed.
	PerHost     int
	Interval    time.Duration
	Timeout     time.Duration
	MaxAttempts int
	Backoff     time.Duration
	MaxBackoff  time.Duration
	Observer    Observer
	Logger      *slog.Logger
	Now         func() time.Time
}

// Dispatcher delivers the outbox's notifications; see the package comment. Safe for
// concurrent use; every process runs one (Run).
type Dispatcher struct {
	cfg    Config
	owner  string
	host   string
	claims atomic.Int64
	// unset are the variables rules needed that this process's environment lacks, noMail
	// whether it found an email rule without a mail server: the claim scan skips blocked rows
	// of those.
	mu     sync.Mutex
	unset  map[string]bool
	noMail bool
	// flight counts the deliveries in flight per destination, and remembers the rules of
	// each destination with deliveries in flight (a busy one's rows are not read).
	flight   map[string]int
	inFlight int
	rules    map[string]map[string]runtime.NotifyRule
}

// New returns a Dispatcher for cfg, its defaults applied.
func New(cfg Config) *Dispatcher {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	cfg.Interval = orDefault(cfg.Interval, DefaultInterval)
	cfg.Timeout = orDefault(cfg.Timeout, DefaultTimeout)
	cfg.Backoff = orDefault(cfg.Backoff, DefaultBackoff)
	cfg.MaxBackoff = orDefault(cfg.MaxBackoff, DefaultMaxBackoff)
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.PerHost <= 0 {
		cfg.PerHost = DefaultPerHost
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	host, _ := os.Hostname()
	return &Dispatcher{cfg: cfg, owner: processName(), host: host, unset: map[string]bool{},
		flight: map[string]int{}, rules: map[string]map[string]runtime.NotifyRule{}}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// processName names this process's claims: host, pid and a random suffix.
func processName() string {
	host, _ := os.Hostname()
	if len(host) > 24 {
		host = host[:24]
	}
	var b [4]byte
	_, _ = crand.Read(b[:])
	return "n:" + host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b[:])
}

// Run delivers due notifications until ctx ends: a pass every Interval, and the next one at
// once while passes claim all they may (a backlog drains at delivery speed). A pass never
// waits for its deliveries; Run waits for those in flight before it returns.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.CheckRules(ctx)
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		full, err := d.pass(ctx, &inFlight)
		if err != nil && ctx.Err() == nil {
			d.cfg.Logger.Error("notification pass failed", "err", err)
		}
		if full && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Pass claims the due notifications (at most one batch, within the per-destination limit)
// and delivers them concurrently, recording each outcome before it returns; it returns how
// many it claimed.
func (d *Dispatcher) Pass(ctx context.Context) (int, error) {
	var wg sync.WaitGroup
	claimed := 0
	_, err := d.claim(ctx, func(owner string, n runtime.Notification, dest string) {
		claimed++
		d.start(ctx, &wg, owner, n, dest)
	})
	wg.Wait()
	return claimed, err
}

// pass claims what Pass does and starts each delivery on wg without waiting for it; full
// is whether it claimed all it asked for (more may be due).
func (d *Dispatcher) pass(ctx context.Context, wg *sync.WaitGroup) (bool, error) {
	return d.claim(ctx, func(owner string, n runtime.Notification, dest string) { d.start(ctx, wg, owner, n, dest) })
}

// claim claims due rows, each with a slot of its destination, and hands each claimed row to
// deliver; full is whether it claimed as many rows as it asked for.
func (d *Dispatcher) claim(ctx context.Context, deliver func(owner string, n runtime.Notification, dest string)) (bool, error) {
	limit := min(batch, maxInFlight-d.inFlightCount())
	if limit <= 0 {
		return false, nil
	}
	now := d.cfg.Now()
	owner := d.owner + ":" + strconv.FormatInt(d.claims.Add(1), 36)
	until := now.Add(leaseFactor * d.cfg.Timeout)
	rows, err := d.cfg.Outbox.ClaimNotifications(ctx, owner, now.Unix(), until.Unix(), limit, d.reach())
	for _, n := range rows {
		deliver(owner, n, d.destination(n.Rule))
	}
	return len(rows) == limit, err
}

// start delivers n on wg in the slot of dest taken for it, given back once the outcome is
// recorded.
func (d *Dispatcher) start(ctx context.Context, wg *sync.WaitGroup, owner string, n runtime.Notification, dest string) {
	wg.Go(func() {
		defer d.release(dest)
		d.deliver(ctx, owner, n)
	})
}

// slots are a Dispatcher's delivery slots as its claims take them (runtime.NotifySlots).
type slots struct{ d *Dispatcher }

func (s slots) Take(r runtime.NotifyRule) bool { return s.d.take(s.d.destination(r), r) }

func (s slots) Give(r runtime.NotifyRule) { s.d.release(s.d.destination(r)) }

// take reserves a delivery slot of dest for a row of r; false when dest, or the dispatcher,
// has all the deliveries in flight it may have. It remembers r while dest has any.
func (d *Dispatcher) take(dest string, r runtime.NotifyRule) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	ok := d.flight[dest] < d.cfg.PerHost && d.inFlight < maxInFlight
	if ok {
		d.flight[dest]++
		d.inFlight++
	}
	if d.flight[dest] == 0 {
		return false
	}
	if d.rules[dest] == nil {
		d.rules[dest] = map[string]runtime.NotifyRule{}
	}
	if key, err := json.Marshal(r); err == nil {
		d.rules[dest][string(key)] = r
	}
	return ok
}

// release gives back a slot of dest; a destination with none in flight is forgotten.
func (d *Dispatcher) release(dest string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inFlight--
	if d.flight[dest]--; d.flight[dest] <= 0 {
		delete(d.flight, dest)
		delete(d.rules, dest)
	}
}

func (d *Dispatcher) inFlightCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inFlight
}

// busyRules are the known rules of the destinations that have all their slots taken; the
// caller holds d.mu.
func (d *Dispatcher) busyRules() []runtime.NotifyRule {
	var out []runtime.NotifyRule
	for dest, n := range d.flight {
		if n < d.cfg.PerHost {
			continue
		}
		for _, r := range d.rules[dest] {
			out = append(out, r)
		}
	}
	return out
}

// destination is where r's deliveries go, for the per-destination limit: a webhook's host
// and port, a Slack webhook's (its URL read as when sent), or the mail server.
func (d *Dispatcher) destination(r runtime.NotifyRule) string {
	target := r.URL
	switch r.Channel {
	case runtime.ChannelEmail:
		return "smtp"
	case runtime.ChannelSlack:
		target = d.cfg.Getenv(r.WebhookURLEnv)
	}
	u, err := url.Parse(target)
	if err != nil {
		return r.Channel + ":"
	}
	return r.Channel + ":" + strings.ToLower(u.Host)
}

// deliver makes one attempt at n and records its outcome.
func (d *Dispatcher) deliver(ctx context.Context, owner string, n runtime.Notification) {
	actx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	err := d.send(actx, n)
	cancel()
	if ctx.Err() != nil {
		return
	}
	now := d.cfg.Now()
	log := d.cfg.Logger.With("run", n.RunUUID, "notification", n.UID, "event", string(n.Event), "channel", n.Rule.Channel)
	var outcome string
	var refused *refusedError
	switch {
	case err == nil:
		outcome, err = "sent", d.cfg.Outbox.NotificationSent(ctx, n.UID, owner, now.Unix())
	case n.Attempts >= d.cfg.MaxAttempts, errors.As(err, &refused):
		log.Warn("notification failed", "attempts", n.Attempts, "reason", err.Error())
		outcome, err = "failed", d.cfg.Outbox.NotificationFailed(ctx, n.UID, owner, err.Error(), now.Unix())
	default:
		due := now.Add(d.backoff(n.Attempts))
		log.Info("notification will be retried", "attempts", n.Attempts, "reason", err.Error(), "due", due.Unix())
		outcome, err = "retried", d.cfg.Outbox.NotificationRetry(ctx, n.UID, owner, due.Unix(), err.Error(), now.Unix())
	}
	if err != nil {
		log.Error("notification outcome not recorded", "outcome", outcome, "err", err)
		return
	}
	if d.cfg.Observer != nil {
		d.cfg.Observer.ObserveNotification(outcome)
	}
}

// reach is what this dispatcher can send, for its claims (runtime.NotifyReach).
func (d *Dispatcher) reach() runtime.NotifyReach {
	d.mu.Lock()
	defer d.mu.Unlock()
	unset := make([]string, 0, len(d.unset))
	for name := range d.unset {
		unset = append(unset, name)
	}
	slices.Sort(unset)
	return runtime.NotifyReach{Blocked: d.blocked, Unset: unset, NoMail: d.noMail, Slots: slots{d}, Skip: d.busyRules()}
}

// blocked is why r cannot be sent from this process ("" when it can): its variable is unset
// here, or it is an email and no mail server is configured. It remembers what it found.
func (d *Dispatcher) blocked(r runtime.NotifyRule) string {
	why := d.missing(r)
	if why == "" {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if name := r.Env(); name != "" {
		d.unset[name] = true
	} else {
		d.noMail = true
	}
	return why + " on " + d.host
}

// missing is what r needs and this process lacks, "" when nothing is.
func (d *Dispatcher) missing(r runtime.NotifyRule) string {
	if r.Channel == runtime.ChannelEmail {
		if d.cfg.Mailer == nil {
			return "no SMTP server is configured (--smtp-url, --smtp-from)"
		}
		return ""
	}
	if name := r.Env(); d.cfg.Getenv(name) == "" {
		return fmt.Sprintf("environment variable %s (%s) is not set", name, r.EnvRole())
	}
	return ""
}

// CheckRules logs an error for each rule of the catalog's configurations this process cannot
// send, and each configuration whose callbacks it cannot sign; their notifications are left
// to processes that can. Run calls it first.
func (d *Dispatcher) CheckRules(ctx context.Context) {
	if d.cfg.Catalog == nil {
		return
	}
	cfgs, err := d.cfg.Catalog.Configurations(ctx)
	if err != nil {
		d.cfg.Logger.Warn("notification rules not checked", "err", err)
		return
	}
	for _, c := range cfgs {
		for i, r := range c.Notify {
			if why := d.missing(r); why != "" {
				d.cfg.Logger.Error("notification rule cannot be sent from this process; other processes must send its notifications",
					"configuration", c.Identifier, "rule", fmt.Sprintf("notify[%d]", i), "channel", r.Channel, "reason", why)
			}
		}
		if !c.AcceptsCallbacks() {
			continue
		}
		if why := d.missing(runtime.CallbackRule("", c.External.CallbackSecretEnv)); why != "" {
			d.cfg.Logger.Error("callbacks cannot be sent from this process; other processes must send them",
				"configuration", c.Identifier, "rule", "callback_secret_env", "channel", runtime.ChannelCallback, "reason", why)
		}
	}
}

// backoff is the wait after the attempts-th failed attempt: Backoff·2^(attempts-1), at most
// MaxBackoff, jittered to between half and all of it.
func (d *Dispatcher) backoff(attempts int) time.Duration {
	wait := d.cfg.Backoff
	for i := 1; i < attempts && wait < d.cfg.MaxBackoff; i++ {
		wait *= 2
	}
	wait = min(wait, d.cfg.MaxBackoff)
	return wait/2 + rand.N(wait/2+1)
}

// send makes one delivery attempt of n through its rule's channel.
func (d *Dispatcher) send(ctx context.Context, n runtime.Notification) error {
	m := render(n, d.cfg.PublicURL)
	switch n.Rule.Channel {
	case runtime.ChannelWebhook:
		return d.webhook(ctx, n, m)
	case runtime.ChannelSlack:
		return d.slack(ctx, n, m)
	case runtime.ChannelEmail:
		return d.email(ctx, n, m)
	case runtime.ChannelCallback:
		return d.callback(ctx, n)
	}
	return fmt.Errorf("unknown channel %q", n.Rule.Channel)
}

func (d *Dispatcher) webhook(ctx context.Context, n runtime.Notification, m message) error {
	body, err := m.body()
	if err != nil {
		return err
	}
	return d.signedPost(ctx, n, body)
}

// callback POSTs the answer of n's request, read now, to the callback_url, signed as a
// webhook is. Any answer but a 2xx is retried: a 4xx too, since the caller's receiver may
// not be ready yet.
func (d *Dispatcher) callback(ctx context.Context, n runtime.Notification) error {
	if d.cfg.Answers == nil {
		return errors.New("this process cannot read request answers for callbacks")
	}
	ans, err := d.cfg.Answers.CallbackAnswer(ctx, n.RunUUID)
	if err != nil {
		return fmt.Errorf("the request's answer could not be read: %w", err)
	}
	body, err := json.Marshal(ans)
	if err != nil {
		return err
	}
	err = d.signedPost(ctx, n, body)
	if refused := (*refusedError)(nil); errors.As(err, &refused) {
		return fmt.Errorf("the endpoint answered %s", refused.status)
	}
	return err
}

// signedPost POSTs body to n's URL under n's stable message id, signed per Standard Webhooks
// with the secret of the variable n's rule names.
func (d *Dispatcher) signedPost(ctx context.Context, n runtime.Notification, body []byte) error {
	secret := d.cfg.Getenv(n.Rule.SecretEnv)
	if secret == "" {
		return errors.New(d.missing(n.Rule))
	}
	key, err := signingKey(secret)
	if err != nil {
		return fmt.Errorf("environment variable %s: %w", n.Rule.SecretEnv, err)
	}
	id, ts := n.MessageID(), d.cfg.Now().Unix()
	return post(ctx, d.cfg.Client, n.Rule.URL, map[string][]string{
		"Webhook-Id":        {id},
		"Webhook-Timestamp": {strconv.FormatInt(ts, 10)},
		"Webhook-Signature": {Sign(key, id, ts, body)},
	}, body)
}

func (d *Dispatcher) slack(ctx context.Context, n runtime.Notification, m message) error {
	target := d.cfg.Getenv(n.Rule.WebhookURLEnv)
	if target == "" {
		return errors.New(d.missing(n.Rule))
	}
	body, err := m.slackBody()
	if err != nil {
		return err
	}
	return post(ctx, d.cfg.Client, target, nil, body)
}

func (d *Dispatcher) email(ctx context.Context, n runtime.Notification, m message) error {
	mailer := d.cfg.Mailer
	if mailer == nil {
		return errors.New(d.missing(n.Rule))
	}
	msg, err := m.email(mailer.from, n.Rule.To, n.MessageID(), d.cfg.Now())
	if err != nil {
		return err
	}
	return mailer.Send(ctx, n.Rule.To, msg)
}
