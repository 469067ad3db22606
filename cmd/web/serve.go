package main

import (
	"context"
	"fmt"
	"time"

	"runsdesk/app"
	"runsdesk/cmd/web/gc"
	"runsdesk/handlers"
	"runsdesk/handlers/admission"
)

// serveOptions are the flags of serve.
type serveOptions struct {
	db              database
	addr            string
	workers         int
	secure          string
	shutdownTimeout time.Duration
	requestTimeout  time.Duration
	maxInFlight     int
	maxWaiters      int
	wakeInterval    time.Duration
	trustedProxies  string
	sessions        sessionLimits
	noMigrate       bool
	demo            bool
	accessLog       autoSwitch
	leasing         leasing
	notify          notifying
	signOn          signOn
	twoFactor       twoFactor
	typo3           besideTYPO3
}

// runServe serves the web UI and JSON API with an in-process worker pool and reaper until
// SIGINT or SIGTERM; then it stops accepting requests, lets those in flight finish (at most
// --shutdown-timeout), stops the workers (their runs go back to the queue) and closes the
// database.
func runServe(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("serve", "[flags]")
	var o serveOptions
	f.bind.database(&o.db)
	f.bind.String(&o.addr, "addr")
	f.bind.Int(&o.workers, "workers")
	f.bind.String(&o.secure, "secure-cookies")
	f.bind.Duration(&o.shutdownTimeout, "shutdown-timeout")
	f.bind.Duration(&o.requestTimeout, "request-timeout")
	f.bind.Int(&o.maxInFlight, "max-in-flight")
	f.bind.Int(&o.maxWaiters, "max-waiters")
	f.bind.Duration(&o.wakeInterval, "wake-interval")
	f.bind.String(&o.trustedProxies, "trusted-proxies")
	f.bind.sessionLimits(&o.sessions)
	f.bind.Bool(&o.noMigrate, "no-migrate")
	f.bind.Bool(&o.demo, "demo")
	f.bind.Auto(&o.accessLog, "access-log")
	f.bind.leasing(&o.leasing)
	f.bind.notifying(&o.notify)
	f.bind.signOn(&o.signOn)
	f.bind.twoFactor(&o.twoFactor)
	f.bind.besideTYPO3(&o.typo3)
	if ok, code := f.parse(args); !ok {
		return code
	}
	secure, err := secureCookies(o.secure, o.addr)
	proxies, perr := handlers.ParseTrustedProxies(o.trustedProxies)
	ssoConfig, withSSO, serr := o.signOn.config(c.getenv)
	mfaConfig, merr := o.twoFactor.config()
	typo3Config, terr := o.typo3.config(o.db.TYPO3)
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case err != nil:
		return f.fail("%v", err)
	case perr != nil:
		return f.fail("--trusted-proxies: %v", perr)
	case o.workers < 1:
		return f.fail("--workers must be at least 1, got %d", o.workers)
	case o.shutdownTimeout <= 0:
		return f.fail("--shutdown-timeout must be positive")
	case o.requestTimeout <= 0:
		return f.fail("--request-timeout must be positive")
	case o.maxInFlight < 0:
		return f.fail("--max-in-flight must not be negative, got %d", o.maxInFlight)
	case o.maxWaiters < 1:
		return f.fail("--max-waiters must be at least 1, got %d", o.maxWaiters)
	case o.wakeInterval <= 0:
		return f.fail("--wake-interval must be positive")
	case o.sessions.check() != nil:
		return f.fail("%v", o.sessions.check())
	case o.leasing.check() != nil:
		return f.fail("%v", o.leasing.check())
	case o.notify.check() != nil:
		return f.fail("%v", o.notify.check())
	case serr != nil:
		return f.fail("%v", serr)
	case merr != nil:
		return f.fail("%v", merr)
	case terr != nil:
		return f.fail("%v", terr)
	case o.demo && o.db.TYPO3:
		return f.fail("--demo sets up a demo desk with demo people; it does not run beside a TYPO3 site (--typo3)")
	case !o.demo && checkKeys(mfaConfig, c.getenv) != nil:
		return f.fail("%v", checkKeys(mfaConfig, c.getenv))
	}
	if o.demo {
		var keyFile string
		if o.db.getenv, keyFile, err = demoKeys(o.db.getenv, o.db.DataDir); err != nil {
			return c.failf("serve", "%v", err)
		}
		if keyFile != "" {
			fmt.Fprintf(c.stderr, "demo: sealing keys from %s (RUNSDESK_KEYS or RUNSDESK_KEYS_FILE overrides it)\n", keyFile)
		}
	}
	gc.Tune(c.getenv)
	ln, err := listen(o.addr)
	if err != nil {
		return c.failf("serve", "%v", err)
	}
	defer ln.Close()
	log := f.logger()
	conn, err := openDatabase(ctx, o.db, log)
	if err != nil {
		return c.failf("serve", "%v", err)
	}
	defer conn.close(log)
	if err := prepareSchema(ctx, conn, o.noMigrate); err != nil {
		return c.failf("serve", "%v", err)
	}
	if err := keysCoverRows(ctx, conn); err != nil {
		return c.failf("serve", "%v", err)
	}
	if err := o.signOn.checkBreakGlass(ctx, conn.pool); err != nil {
		return c.failf("serve", "%v", err)
	}
	cfg := appConfig(c, conn, log, o.demo, o.workers, o.leasing)
	cfg.SecureCookies, cfg.TrustedProxies = secure, proxies
	cfg.MaxInFlight, cfg.RequestTimeout = o.maxInFlight, o.requestTimeout
	cfg.MaxWaiters, cfg.WakeInterval = o.maxWaiters, o.wakeInterval
	cfg.SessionIdle, cfg.SessionMax = o.sessions.Idle, o.sessions.Max
	cfg.Notify = o.notify.config(o.leasing.PollInterval)
	cfg.NoAccessLog = !o.accessLog.on(!f.textLogs())
	cfg.MFA = mfaConfig
	cfg.TYPO3 = typo3Config
	cfg.TYPO3.Site = conn.site
	if withSSO {
		if cfg.SignOn, err = o.signOn.handlers(ctx, ssoConfig, o.notify.PublicURL); err != nil {
			return c.failf("serve", "%v", err)
		}
	}
	a, err := app.New(ctx, cfg)
	if err != nil {
		return c.failf("serve", "%v", err)
	}
	var desk demoDesk
	if o.demo {
		if desk, err = setUpDemo(ctx, conn, a.Runtime, cfg.Tools, c.getenv); err != nil {
			_ = a.Close(ctx)
			return c.failf("serve", "set up the demo desk: %v", err)
		}
	}
	a.StartWorkers()
	served := make(chan error, 1)
	go func() { served <- a.Serve(ln) }()

	url := "http://" + ln.Addr().String() + "/"
	log.Info("serving", "url", url, "workers", o.workers, "max_in_flight", admission.Slots(o.maxInFlight),
		"secure_cookies", secure, "demo", o.demo)
	if secure {
		log.Warn("session cookies are Secure: serve runsdesk behind HTTPS, or sign-in will not stick")
	}
	if o.demo {
		desk.print(c.stdout, url, o.db.DataDir, conn.server != nil)
	} else {
		fmt.Fprintf(c.stdout, "runsdesk is serving on %s (stop with Ctrl-C)\n", url)
	}

	code := exitOK
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-served:
		log.Error("the HTTP server stopped", "err", err)
		code = exitFailure
	}
	shutdown, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	if err := a.Close(shutdown); err != nil {
		log.Warn("requests still in flight at the shutdown timeout were cut off", "err", err)
	}
	log.Info("stopped")
	return code
}
