package notify_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/internal/testdb"
	"runsdesk/notify"
	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// t0 is when the test runs wait; the dispatchers' clock starts there.
var t0 = time.Unix(1_800_000_000, 0)

// clock is a settable clock for a dispatcher.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// desk is a migrated database holding configuration "refunds" with the given rules; pool is
// its connection pool, for a Store of other keys.
type desk struct {
	store *db.Store
	pool  *sql.DB
	cfg   int64
}

func newDesk(t *testing.T, rules ...runtime.NotifyRule) *desk {
	t.Helper()
	pool, _ := testdb.New(t)
	d := &desk{store: db.New(pool), pool: pool}
	d.cfg = d.configure(t, "refunds", rules...)
	return d
}

// configure stores configuration identifier with the given rules and returns its uid.
func (d *desk) configure(t *testing.T, identifier string, rules ...runtime.NotifyRule) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := d.store.UpsertCatalog(ctx, []tool.Definition{{Name: "ask_refund_amount", Parameters: []byte(`{"type":"object"}`)}},
		[]runtime.Configuration{{Identifier: identifier, Name: "Refund assistant", Provider: model.Settings{Kind: model.KindScripted},
			Tools: []string{"ask_refund_amount"}, Notify: rules}}); err != nil {
		t.Fatal(err)
	}
	c, err := d.store.ConfigurationByIdentifier(ctx, identifier)
	if err != nil {
		t.Fatal(err)
	}
	return c.UID
}

// wait creates a run of "refunds" that waits for input to ask_refund_amount since t0, which
// writes its waiting notifications.
func (d *desk) wait(t *testing.T) runtime.Run {
	t.Helper()
	return d.waitIn(t, d.cfg, "refunds")
}

// waitIn is wait for a run of configuration cfg (its identifier).
func (d *desk) waitIn(t *testing.T, cfg int64, identifier string) runtime.Run {
	t.Helper()
	ctx := context.Background()
	r, err := d.store.CreateRun(ctx, runtime.NewRun{UUID: uuid.NewString(), ConfigurationUID: cfg, ConfigurationIdentifier: identifier,
		BeUser: 1, QueuedRequest: `{}`, Lease: runtime.Lease{Owner: "w", Expires: t0.Unix() + 60, Now: t0.Unix()}, Now: t0.Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.store.Suspend(ctx, r.UID, "w", runtime.Suspension{Status: runtime.StatusWaitingInput,
		State: `{"messages":[]}`, Tools: []string{"ask_refund_amount"}}, t0.Unix()); err != nil {
		t.Fatal(err)
	}
	return r
}

func (d *desk) notifications(t *testing.T, run int64) []runtime.Notification {
	t.Helper()
	ns, err := d.store.RunNotifications(context.Background(), run, 100)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// counter is an Observer counting outcomes.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) ObserveNotification(outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[outcome]++
}

func (c *counter) get(outcome string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[outcome]
}

func (d *desk) dispatcher(clk *clock, env map[string]string, obs notify.Observer, mailer *notify.Mailer) *notify.Dispatcher {
	return notify.New(notify.Config{Outbox: d.store, PublicURL: "https://desk.example/", Mailer: mailer,
		Getenv: func(k string) string { return env[k] }, Now: clk.Now, Observer: obs,
		Timeout: 5 * time.Second, Backoff: 10 * time.Second, MaxAttempts: 3})
}

// testCertificate is a self-signed certificate for 127.0.0.1 and the pool that trusts it.
func testCertificate(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "runsdesk test SMTP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
