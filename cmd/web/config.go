package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"runsdesk/app"
	"runsdesk/handlers"
	"runsdesk/notify"
	"runsdesk/runtime/engine"
)

// setting is one row of the configuration table: a flag, its environment twin, its default
// and what it means. Every flag of every command is in the table; the environment variable
// applies when the flag is not given, the default when neither is.
type setting struct {
	Flag    string
	Env     string
	Default string
	Usage   string
}

// settings is the configuration table of runsdesk.
//
//	flag               environment                 default          commands
//	--dsn              RUNSDESK_DSN                (private server) every command that uses the database
//	--data-dir         RUNSDESK_DATA_DIR           ./var            same (the private server keeps its data in DIR/mysql)
//	--typo3            RUNSDESK_TYPO3              false            same (beside a TYPO3 site: runsdesk's own tables, TYPO3's untouched)
//	--addr             RUNSDESK_ADDR               127.0.0.1:8080   serve, healthcheck
//	--timeout          RUNSDESK_HEALTHCHECK_TIMEOUT 3s              healthcheck
//	--workers          RUNSDESK_WORKERS            16               serve, worker
//	--secure-cookies   RUNSDESK_SECURE_COOKIES     auto             serve (auto: on unless --addr is loopback)
//	--shutdown-timeout RUNSDESK_SHUTDOWN_TIMEOUT   30s              serve
//	--request-timeout  RUNSDESK_REQUEST_TIMEOUT    10s              serve
//	--max-in-flight    RUNSDESK_MAX_IN_FLIGHT      0 (4 per CPU)    serve
//	--max-waiters      RUNSDESK_MAX_WAITERS        1000             serve
//	--wake-interval    RUNSDESK_WAKE_INTERVAL      500ms            serve
//	--trusted-proxies  RUNSDESK_TRUSTED_PROXIES    - (none)         serve
//	--session-idle     RUNSDESK_SESSION_IDLE       30m (also max)   serve
//	--session-max      RUNSDESK_SESSION_MAX        12h (also max)   serve
//	--no-migrate       RUNSDESK_NO_MIGRATE         false            serve, worker
//	--demo             RUNSDESK_DEMO               false            serve, worker, apply, reap, cancel
//	--log-level        RUNSDESK_LOG_LEVEL          info             every command
//	--log-format       RUNSDESK_LOG_FORMAT         auto             every command (auto: text on a terminal, else json)
//	--access-log       RUNSDESK_ACCESS_LOG         auto             serve (auto: on with json logs, off with text)
//	--format           RUNSDESK_FORMAT             table            the list commands: table, json (audit list: csv, jsonl)
//	--username         RUNSDESK_USERNAME           -                user add
//	--role             RUNSDESK_ROLE               -                user add
//	--name             RUNSDESK_TOKEN_NAME         -                token create
//	--scopes           RUNSDESK_TOKEN_SCOPES       -                token create
//	-f, --file         RUNSDESK_FILE               -                apply
//	--dry-run          RUNSDESK_DRY_RUN            false            apply, retention run
//	--author           RUNSDESK_APPLY_AUTHOR       - (unknown)      apply
//	--limit            RUNSDESK_REAP_LIMIT         50               reap
//	--lease            RUNSDESK_LEASE              15m              serve, worker
//	--reap-interval    RUNSDESK_REAP_INTERVAL      30s              serve, worker
//	--poll-interval    RUNSDESK_POLL_INTERVAL      1s               serve, worker (also the outbox's)
//	--public-url       RUNSDESK_PUBLIC_URL         - (relative)     serve, worker
//	--smtp-url         RUNSDESK_SMTP_URL           - (no email)     serve, worker
//	--smtp-from        RUNSDESK_SMTP_FROM          -                serve, worker
//	--notify-timeout   RUNSDESK_NOTIFY_TIMEOUT     10s              serve, worker
//	--notify-per-host  RUNSDESK_NOTIFY_PER_HOST    4                serve, worker
//	--failed           RUNSDESK_NOTIFICATIONS_FAILED false          notifications list
//	--expire-interval  RUNSDESK_EXPIRE_INTERVAL    15s              serve, worker
//	--elicitation-holds RUNSDESK_ELICITATION_HOLDS 8               serve, worker
//	--oidc-issuer      RUNSDESK_OIDC_ISSUER        - (no SSO)       serve (signon.go, as the next eight)
//	--oidc-client-id   RUNSDESK_OIDC_CLIENT_ID     -                serve
//	--oidc-client-secret-env RUNSDESK_OIDC_CLIENT_SECRET_ENV - (public client) serve
//	--oidc-scopes      RUNSDESK_OIDC_SCOPES        openid,profile,email serve
//	--oidc-role-claim  RUNSDESK_OIDC_ROLE_CLAIM    groups           serve
//	--oidc-roles       RUNSDESK_OIDC_ROLES         -                serve
//	--oidc-name        RUNSDESK_OIDC_NAME          - (issuer host)  serve
//	--password-signin  RUNSDESK_PASSWORD_SIGNIN    true             serve
//	--break-glass-user RUNSDESK_BREAK_GLASS_USER   -                serve
//	--typo3-roles      RUNSDESK_TYPO3_ROLES        - (none)         serve (typo3.go, as the next two; need --typo3)
//	--typo3-admins-as  RUNSDESK_TYPO3_ADMINS_AS    admin            serve
//	--typo3-backend-url RUNSDESK_TYPO3_BACKEND_URL - (no link)      serve
//	--require-mfa      RUNSDESK_REQUIRE_MFA        - (none)         serve (mfa.go, as the next one)
//	--mfa-always       RUNSDESK_MFA_ALWAYS         false            serve
//	--retention-interval RUNSDESK_RETENTION_INTERVAL 1h           serve, worker
//	--audit-lag        RUNSDESK_AUDIT_LAG          5s               serve, worker, audit verify
//	--checkpoint-interval RUNSDESK_CHECKPOINT_INTERVAL 1h         serve, worker
//	--checkpoint-file  RUNSDESK_CHECKPOINT_FILE    - (none)         serve, worker
//	--checkpoints      RUNSDESK_CHECKPOINTS        - (none)         audit verify
//	--from             RUNSDESK_AUDIT_FROM         1                audit verify
//	--since, --until   RUNSDESK_AUDIT_SINCE, _UNTIL - (any time)    audit list
//	--actor, --action, --run, --outcome RUNSDESK_AUDIT_ACTOR, … -   audit list
//
// The audit chain's signing key is read from RUNSDESK_AUDIT_KEY or the file
// RUNSDESK_AUDIT_KEY_FILE names, its verifier from RUNSDESK_AUDIT_VERIFIER_KEY: never flags.
//
// Builds with -tags runsdesk_faults also read RUNSDESK_FAULT_POINT (faults_on.go); it has no
// flag and ordinary builds ignore it.
func settings() []setting {
	return []setting{
		{"dsn", "RUNSDESK_DSN", "", "MySQL/MariaDB DSN, e.g. user:pass@tcp(db:3306)/runsdesk; empty starts a private local server with its data in DATA_DIR/mysql"},
		{"data-dir", "RUNSDESK_DATA_DIR", "./var", "directory for local data (the private database server's files)"},
		{"typo3", "RUNSDESK_TYPO3", "false", "run beside a TYPO3 site on its database: runsdesk keeps its rows in tables of its own (tx_runsdesk_*) and only reads be_users, be_groups and tx_nrllm_agentrun"},
		{"typo3-roles", "RUNSDESK_TYPO3_ROLES", "", "beside TYPO3: the runsdesk role each TYPO3 backend group gives, admin=<group>,reviewer=<group>|<group>,support=<group>, a group by its title or as #<uid> (subgroups count; the highest role wins); a person in no mapped group who is no TYPO3 admin cannot sign in"},
		{"typo3-admins-as", "RUNSDESK_TYPO3_ADMINS_AS", "admin", "beside TYPO3: the role TYPO3 admins (be_users.admin) have at least: admin or reviewer"},
		{"typo3-backend-url", "RUNSDESK_TYPO3_BACKEND_URL", "", "beside TYPO3: the site's backend address, e.g. https://www.example.com/typo3, linked from the runs of the TYPO3 extension (decided there)"},
		{"addr", "RUNSDESK_ADDR", "127.0.0.1:8080", "address the web UI and API listen on"},
		{"timeout", "RUNSDESK_HEALTHCHECK_TIMEOUT", "3s", "healthcheck: how long to wait for /healthz's answer"},
		{"workers", "RUNSDESK_WORKERS", strconv.Itoa(engine.DefaultWorkers), "runs executed at the same time by this process"},
		{"secure-cookies", "RUNSDESK_SECURE_COOKIES", "auto", "mark the session cookie Secure (__Host-) and send HSTS: true, false or auto (on unless the address is loopback)"},
		{"shutdown-timeout", "RUNSDESK_SHUTDOWN_TIMEOUT", "30s", "how long shutdown waits for requests in flight"},
		{"request-timeout", "RUNSDESK_REQUEST_TIMEOUT", "10s", "deadline of one request's work: past it, a request the database holds up answers 503"},
		{"max-in-flight", "RUNSDESK_MAX_IN_FLIGHT", "0", "pages and API requests that build their responses at once; the rest wait their turn, in order, until --request-timeout (then 503). 0: 4 per CPU"},
		{"max-waiters", "RUNSDESK_MAX_WAITERS", "1000", "long-lived requests (GET /api/v1/runs/{id}?wait=…) held at once by this process, apart from --max-in-flight and --request-timeout; beyond it 503 with Retry-After"},
		{"wake-interval", "RUNSDESK_WAKE_INTERVAL", "500ms", "how often one database read wakes the held requests whose runs or tokens another process changed (this process's own transitions wake them at once)"},
		{"trusted-proxies", "RUNSDESK_TRUSTED_PROXIES", "", "comma-separated CIDR ranges or addresses of load balancers and proxies whose X-Forwarded-For names the client (rightmost untrusted address); empty: the client is the connection's peer"},
		{"session-idle", "RUNSDESK_SESSION_IDLE", "30m", "a signed-in session unused this long ends (at least 1m; at most 30m, the default: it may only be shortened)"},
		{"session-max", "RUNSDESK_SESSION_MAX", "12h", "a signed-in session ends this long after sign-in, however active (at least 1m; at most 12h, the default: it may only be shortened)"},
		{"no-migrate", "RUNSDESK_NO_MIGRATE", "false", "do not apply database migrations at start"},
		{"demo", "RUNSDESK_DEMO", "false", "register the demo tools; serve also sets up the demo desk on a fresh database"},
		{"log-level", "RUNSDESK_LOG_LEVEL", "info", "debug, info, warn or error"},
		{"log-format", "RUNSDESK_LOG_FORMAT", "auto", "text, json or auto (text when standard error is a terminal, else json)"},
		{"format", "RUNSDESK_FORMAT", "table", "output: table or json (audit list also csv or jsonl)"},
		{"access-log", "RUNSDESK_ACCESS_LOG", "auto", "log one line per request: true, false or auto (on with json logs, off with text)"},
		{"username", "RUNSDESK_USERNAME", "", "the new user's username"},
		{"role", "RUNSDESK_ROLE", "", "admin, reviewer or support"},
		{"email", "RUNSDESK_EMAIL", "", "user add: the person's address for the notifications that concern them (a run assigned to them)"},
		{"name", "RUNSDESK_TOKEN_NAME", "", "the service account's name"},
		{"scopes", "RUNSDESK_TOKEN_SCOPES", "", "comma-separated scopes: run, read, approve, cancel, content"},
		{"expires", "RUNSDESK_TOKEN_EXPIRES", "", "token create: how long the token works, like 90d or 12h (empty: it does not expire)"},
		{"file", "RUNSDESK_FILE", "", "the YAML file to apply (- reads standard input)"},
		{"dry-run", "RUNSDESK_DRY_RUN", "false", "report what would change and write nothing"},
		{"author", "RUNSDESK_APPLY_AUTHOR", "", "username of the person the file's standing approvals are recorded as applied by (they never approve a four-eyes turn that person started); empty: unknown, so they approve no turn of a four-eyes configuration"},
		{"limit", "RUNSDESK_REAP_LIMIT", "50", "most stale runs handled in one pass"},
		{"lease", "RUNSDESK_LEASE", "15m", "how long a worker's claim on a run lasts without renewal; a run whose lease lapsed is reaped"},
		{"reap-interval", "RUNSDESK_REAP_INTERVAL", "30s", "how often the reaper looks for runs whose lease lapsed"},
		{"poll-interval", "RUNSDESK_POLL_INTERVAL", "1s", "how often idle workers look for queued runs, and the dispatcher for due notifications"},
		{"public-url", "RUNSDESK_PUBLIC_URL", "", "the desk's address as people open it, e.g. https://desk.example.com: the base of the links in notifications (empty: links are relative)"},
		{"smtp-url", "RUNSDESK_SMTP_URL", "", "mail server for email notifications: smtp://user:pass@host:587 (STARTTLS) or smtps://user:pass@host:465 (implicit TLS); empty: email notifications fail"},
		{"smtp-from", "RUNSDESK_SMTP_FROM", "", "sender address of notification emails, e.g. \"Runs desk <desk@example.com>\""},
		{"notify-timeout", "RUNSDESK_NOTIFY_TIMEOUT", "10s", "how long one notification delivery attempt may take; a dispatcher's claim on a notification lasts three times as long"},
		{"notify-per-host", "RUNSDESK_NOTIFY_PER_HOST", strconv.Itoa(notify.DefaultPerHost), "notification deliveries this process has in flight to one destination (a webhook's host and port, Slack, the mail server) at most; its other notifications wait, unclaimed, while the others' are sent"},
		{"failed", "RUNSDESK_NOTIFICATIONS_FAILED", "false", "list only the notifications given up after their last attempt"},
		{"id", "RUNSDESK_KEY_ID", "", "the new key's id: 1-32 letters, digits, _ or - (default k followed by today's date)"},
		{"batch", "RUNSDESK_RESEAL_BATCH", "200", "rows read and re-sealed per batch (1-200)"},
		{"seal-clear", "RUNSDESK_SEAL_CLEAR", "false", "also seal values stored in clear (written before keys were set)"},
		{"release", "RUNSDESK_ASSIGN_RELEASE", "false", "runs assign: release the run (assign it to nobody) instead of naming a person"},
		{"force", "RUNSDESK_ASSIGN_FORCE", "false", "runs assign: change the assignment of a run someone else holds (audited as forced)"},
		{"expire-interval", "RUNSDESK_EXPIRE_INTERVAL", "15s", "how often each process looks for waiting runs whose reminder, escalation or expiry is due"},
		{"oidc-issuer", "RUNSDESK_OIDC_ISSUER", "", "OpenID Connect provider's issuer URL (https); empty: no single sign-on"},
		{"oidc-client-id", "RUNSDESK_OIDC_CLIENT_ID", "", "runsdesk's client id at the provider"},
		{"oidc-client-secret-env", "RUNSDESK_OIDC_CLIENT_SECRET_ENV", "", "NAME of the environment variable holding the client secret (empty: a public client, PKCE only)"},
		{"oidc-scopes", "RUNSDESK_OIDC_SCOPES", "openid,profile,email", "comma-separated scopes requested at sign-in (openid is always added)"},
		{"oidc-role-claim", "RUNSDESK_OIDC_ROLE_CLAIM", "groups", "claim name or dotted path holding the person's groups, e.g. groups or realm_access.roles (read from the ID token, else from UserInfo)"},
		{"oidc-roles", "RUNSDESK_OIDC_ROLES", "", "groups per role: admin=desk-admins,reviewer=desk-reviewers|finance,support=desk-support; the highest role wins, a person in no mapped group may not sign in"},
		{"oidc-name", "RUNSDESK_OIDC_NAME", "", "the provider's name on the \"Sign in with\" button (default: the issuer's host)"},
		{"password-signin", "RUNSDESK_PASSWORD_SIGNIN", "true", "allow password sign-in; false: only --break-glass-user may use a password (at /login?password=1), everyone else signs in with the provider"},
		{"break-glass-user", "RUNSDESK_BREAK_GLASS_USER", "", "the admin who may still sign in with a password when --password-signin=false"},
		{"audit-lag", "RUNSDESK_AUDIT_LAG", "5s", "how old an audit or decision row must be before it joins the audit chain (so a row committed late on another node is not passed over); the chainer runs a pass every lag, and audit verify calls a row unchained after twice the lag a gap"},
		{"checkpoint-interval", "RUNSDESK_CHECKPOINT_INTERVAL", "1h", "how often the audit chainer signs a checkpoint of the chain with RUNSDESK_AUDIT_KEY (or RUNSDESK_AUDIT_KEY_FILE)"},
		{"checkpoint-file", "RUNSDESK_CHECKPOINT_FILE", "", "a file each signed checkpoint is also appended to, best kept away from the database (empty: none)"},
		{"checkpoints", "RUNSDESK_CHECKPOINTS", "", "audit verify: a file of signed checkpoints (--checkpoint-file) to check the chain against, with those in the database"},
		{"from", "RUNSDESK_AUDIT_FROM", "1", "audit verify: the first chain sequence to recompute (the stored hash before it is trusted)"},
		{"since", "RUNSDESK_AUDIT_SINCE", "", "audit list: rows at or after this time: a duration back from now (24h) or a date (2026-01-31, 2026-01-31T12:00:00Z)"},
		{"until", "RUNSDESK_AUDIT_UNTIL", "", "audit list: rows before this time (same forms as --since)"},
		{"actor", "RUNSDESK_AUDIT_ACTOR", "", "audit list: rows of this actor (username or service account name)"},
		{"action", "RUNSDESK_AUDIT_ACTION", "", "audit list: rows of this action (login, approve, …)"},
		{"run", "RUNSDESK_AUDIT_RUN", "", "audit list: rows of this run (its uuid)"},
		{"outcome", "RUNSDESK_AUDIT_OUTCOME", "", "audit list: rows of this outcome (success, denied, …)"},
		{"require-mfa", "RUNSDESK_REQUIRE_MFA", "", "comma-separated roles that must sign in with a second factor (TOTP), e.g. admin,reviewer: such a person without one may only enrol after their password; needs sealing keys (RUNSDESK_KEYS)"},
		{"mfa-always", "RUNSDESK_MFA_ALWAYS", "false", "ask for the TOTP code after single sign-on too, even when the provider says it did MFA (amr mfa or otp)"},
		{"retention-interval", "RUNSDESK_RETENTION_INTERVAL", "1h", "how often each process runs a retention pass (one process at a time across the desk) removing the content its configurations' retention has outlived"},
		{"elicitation-holds", "RUNSDESK_ELICITATION_HOLDS", strconv.Itoa(engine.DefaultElicitationHolds), "calls this process holds open while a person answers a request for input their MCP server sent during the call; beyond it such a request is declined (0: every one)"},
	}
}

// binder defines flags on a FlagSet from the settings table, taking each default from the
// environment twin when it is set. Environment values that do not parse are collected in errs.
type binder struct {
	fs     *flag.FlagSet
	getenv func(string) string
	errs   []error
}

func newBinder(fs *flag.FlagSet, getenv func(string) string) *binder {
	return &binder{fs: fs, getenv: getenv}
}

// row returns the table row of flag name; an unknown name is a programming error.
func (b *binder) row(name string) setting {
	for _, s := range settings() {
		if s.Flag == name {
			return s
		}
	}
	panic("config: no setting " + name)
}

// initial returns the environment value of s when set, else its default, and where it came
// from for messages.
func (b *binder) initial(s setting) (string, string) {
	if v := b.getenv(s.Env); v != "" {
		return v, "environment variable " + s.Env
	}
	return s.Default, ""
}

func (b *binder) usage(s setting) string {
	return fmt.Sprintf("%s (env %s)", s.Usage, s.Env)
}

// String binds a text flag.
func (b *binder) String(p *string, name string) {
	s := b.row(name)
	*p, _ = b.initial(s)
	b.fs.StringVar(p, name, *p, b.usage(s))
}

// Int binds a whole-number flag.
func (b *binder) Int(p *int, name string) {
	s := b.row(name)
	v, from := b.initial(s)
	n, err := strconv.Atoi(v)
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("%s: %q is not a whole number", from, v))
	}
	*p = n
	b.fs.IntVar(p, name, n, b.usage(s))
}

// Bool binds a switch.
func (b *binder) Bool(p *bool, name string) {
	s := b.row(name)
	v, from := b.initial(s)
	t, err := strconv.ParseBool(v)
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("%s: %q is not true or false", from, v))
	}
	*p = t
	b.fs.BoolVar(p, name, t, b.usage(s))
}

// Duration binds a duration flag.
func (b *binder) Duration(p *time.Duration, name string) {
	s := b.row(name)
	v, from := b.initial(s)
	d, err := time.ParseDuration(v)
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("%s: %q is not a duration like 30s", from, v))
	}
	*p = d
	b.fs.DurationVar(p, name, d, b.usage(s))
}

// Err returns the environment values that did not parse, joined, or nil.
func (b *binder) Err() error { return errors.Join(b.errs...) }

// database is the configuration every command that opens the database shares.
type database struct {
	DSN     string
	DataDir string
	// TYPO3 is --typo3: runsdesk beside a TYPO3 site (db.BesideTYPO3).
	TYPO3 bool
	// getenv reads the sealing keys (RUNSDESK_KEYS, RUNSDESK_KEYS_FILE): never flags, so a
	// key never shows in a process listing.
	getenv func(string) string
}

func (b *binder) database(c *database) {
	b.String(&c.DSN, "dsn")
	b.String(&c.DataDir, "data-dir")
	b.Bool(&c.TYPO3, "typo3")
	c.getenv = b.getenv
}

// leasing is the lease and scheduling configuration of the commands that run workers.
type leasing struct {
	Lease        time.Duration
	ReapInterval time.Duration
	PollInterval time.Duration
	// ExpireInterval is how often the expirer looks for due pauses.
	ExpireInterval time.Duration
	// ElicitationHolds bounds the calls held open for a person's answer (0: none).
	ElicitationHolds int
	// RetentionInterval is how often the retention sweeper runs a pass.
	RetentionInterval time.Duration
	// AuditLag, CheckpointInterval and CheckpointFile configure the audit chainer.
	AuditLag           time.Duration
	CheckpointInterval time.Duration
	CheckpointFile     string
}

func (b *binder) leasing(l *leasing) {
	b.Duration(&l.Lease, "lease")
	b.Duration(&l.ReapInterval, "reap-interval")
	b.Duration(&l.PollInterval, "poll-interval")
	b.Duration(&l.ExpireInterval, "expire-interval")
	b.Int(&l.ElicitationHolds, "elicitation-holds")
	b.Duration(&l.RetentionInterval, "retention-interval")
	b.Duration(&l.AuditLag, "audit-lag")
	b.Duration(&l.CheckpointInterval, "checkpoint-interval")
	b.String(&l.CheckpointFile, "checkpoint-file")
}

// check returns an error naming the first setting that is not positive, or whose lease is
// shorter than a second (leases are stored in whole seconds).
func (l leasing) check() error {
	switch {
	case l.Lease < time.Second:
		return fmt.Errorf("--lease must be at least 1s, got %s", l.Lease)
	case l.ReapInterval <= 0:
		return fmt.Errorf("--reap-interval must be positive, got %s", l.ReapInterval)
	case l.PollInterval <= 0:
		return fmt.Errorf("--poll-interval must be positive, got %s", l.PollInterval)
	case l.ExpireInterval <= 0:
		return fmt.Errorf("--expire-interval must be positive, got %s", l.ExpireInterval)
	case l.RetentionInterval <= 0:
		return fmt.Errorf("--retention-interval must be positive, got %s", l.RetentionInterval)
	case l.AuditLag < time.Second:
		return fmt.Errorf("--audit-lag must be at least 1s, got %s", l.AuditLag)
	case l.CheckpointInterval <= 0:
		return fmt.Errorf("--checkpoint-interval must be positive, got %s", l.CheckpointInterval)
	case l.ElicitationHolds < 0:
		return fmt.Errorf("--elicitation-holds must not be negative, got %d", l.ElicitationHolds)
	}
	return nil
}

// holds is ElicitationHolds as the runtime counts it: 0 holds none (its negative), unset
// (a command that runs no workers) its default.
func (l leasing) holds() int {
	if l.ElicitationHolds == 0 && l.Lease > 0 {
		return -1
	}
	return l.ElicitationHolds
}

// secureCookies decides the session cookie policy: "true" and "false" as given, "auto" on
// unless addr's host is loopback (localhost, 127.0.0.0/8, ::1).
func secureCookies(mode, addr string) (bool, error) {
	switch strings.ToLower(mode) {
	case "true", "on", "1", "yes":
		return true, nil
	case "false", "off", "0", "no":
		return false, nil
	case "auto", "":
		return !loopback(addr), nil
	}
	return false, fmt.Errorf("--secure-cookies: %q is not true, false or auto", mode)
}

// loopback reports whether addr (host:port) listens on a loopback address only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// notifying is the notification configuration of the commands that run workers.
type notifying struct {
	PublicURL string
	SMTPURL   string
	SMTPFrom  string
	Timeout   time.Duration
	PerHost   int
}

func (b *binder) notifying(n *notifying) {
	b.String(&n.PublicURL, "public-url")
	b.String(&n.SMTPURL, "smtp-url")
	b.String(&n.SMTPFrom, "smtp-from")
	b.Duration(&n.Timeout, "notify-timeout")
	b.Int(&n.PerHost, "notify-per-host")
}

// check returns an error naming the first setting that is not acceptable.
func (n notifying) check() error {
	if n.PublicURL != "" {
		u, err := url.Parse(n.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--public-url must be an absolute http or https URL without credentials, query or fragment, got %q", n.PublicURL)
		}
	}
	if n.Timeout < time.Second {
		return fmt.Errorf("--notify-timeout must be at least 1s, got %s", n.Timeout)
	}
	if n.PerHost < 1 {
		return fmt.Errorf("--notify-per-host must be at least 1, got %d", n.PerHost)
	}
	return nil
}

// config is the app's notification configuration, polling the outbox every interval.
func (n notifying) config(interval time.Duration) app.NotifyConfig {
	return app.NotifyConfig{PublicURL: n.PublicURL, SMTPURL: n.SMTPURL, SMTPFrom: n.SMTPFrom, Timeout: n.Timeout, PerHost: n.PerHost, Interval: interval}
}

// sessionLimits are serve's session timeouts: they may only shorten the desk's defaults,
// which are also their maximums (handlers.DefaultIdleTimeout, handlers.DefaultLifetime).
type sessionLimits struct {
	Idle time.Duration
	Max  time.Duration
}

func (b *binder) sessionLimits(l *sessionLimits) {
	b.Duration(&l.Idle, "session-idle")
	b.Duration(&l.Max, "session-max")
}

// check returns an error naming the first limit below a minute or above its default.
func (l sessionLimits) check() error {
	switch {
	case l.Idle < time.Minute || l.Idle > handlers.DefaultIdleTimeout:
		return fmt.Errorf("--session-idle must be between 1m and %s (it may only shorten the default), got %s",
			shortDuration(handlers.DefaultIdleTimeout), shortDuration(l.Idle))
	case l.Max < time.Minute || l.Max > handlers.DefaultLifetime:
		return fmt.Errorf("--session-max must be between 1m and %s (it may only shorten the default), got %s",
			shortDuration(handlers.DefaultLifetime), shortDuration(l.Max))
	}
	return nil
}

// shortDuration writes d without zero minutes and seconds: 30m, 12h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
