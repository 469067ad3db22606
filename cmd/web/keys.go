package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"runsdesk/db"
	"runsdesk/seal"
)

// runKeysGenerate prints a new random sealing key as an RUNSDESK_KEYS entry on stdout.
func runKeysGenerate(_ context.Context, c *cli, args []string) int {
	f := c.newFlags("keys generate", "[--id ID]")
	var id string
	f.bind.String(&id, "id")
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	if id == "" {
		id = "k" + time.Now().UTC().Format("20060102")
	}
	line, err := seal.Generate(id)
	if err != nil {
		return f.fail("%v", err)
	}
	fmt.Fprintln(c.stdout, line)
	fmt.Fprintln(c.stderr, "Put it first in RUNSDESK_KEYS (id:key,id:key,…) to seal with it; keep the older keys after it until `runsdesk keys rotate` reports that every run is sealed with it.")
	return exitOK
}

// runKeysRotate seals every stored run state and queued request, then every executed call's
// arguments, again with the active key, in batches, printing progress; runs whose stored
// values do not open are named and left.
func runKeysRotate(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("keys rotate", "[--batch N] [flags]")
	var dbc database
	var batch int
	f.bind.database(&dbc)
	f.bind.Int(&batch, "batch")
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case batch < 1 || batch > 200:
		return f.fail("--batch must be between 1 and 200, got %d", batch)
	}
	return onMigratedDatabase(ctx, c, f, "keys rotate", dbc, func(conn *conn) int {
		if conn.keys == nil {
			return c.failf("keys rotate", "no keys are configured: set RUNSDESK_KEYS or RUNSDESK_KEYS_FILE")
		}
		store := db.New(conn.pool, db.WithKeys(conn.keys))
		runs, err := resealAll(ctx, c, batch, "run", "runs with state", store.Reseal)
		if err != nil {
			return c.failf("keys rotate", "%v", err)
		}
		calls, err := resealAll(ctx, c, batch, "call", "executed calls", store.ResealCalls)
		if err != nil {
			return c.failf("keys rotate", "%v", err)
		}
		fmt.Fprintf(c.stdout, "Executed calls: %d re-sealed, %d already were.\n", calls.Resealed, calls.Current)
		fmt.Fprintf(c.stdout, "Rotation done: %d run(s) re-sealed with key %q, %d already were.\n",
			runs.Resealed, conn.keys.Active(), runs.Current)
		if n := len(runs.Unopenable); n > 0 {
			return c.failf("keys rotate", "%d run(s) hold state that does not open and were left as stored: %s",
				n, strings.Join(runs.Unopenable, ", "))
		}
		if n := len(calls.Unopenable); n > 0 {
			return c.failf("keys rotate", "%d executed call(s) hold arguments that do not open and were left as stored (runs %s)",
				n, strings.Join(calls.Unopenable, ", "))
		}
		return exitOK
	})
}

// resealAll calls reseal batch by batch from the first row until it is done, printing one
// progress line per batch (rows of kind, counted as what), and returns the totals.
func resealAll(ctx context.Context, c *cli, batch int, kind, what string,
	reseal func(context.Context, int64, int) (db.ResealBatch, error)) (db.ResealBatch, error) {
	var total db.ResealBatch
	for after := int64(0); ; {
		b, err := reseal(ctx, after, batch)
		if err != nil {
			return total, err
		}
		total.Scanned += b.Scanned
		total.Resealed += b.Resealed
		total.Current += b.Current
		total.Unopenable = append(total.Unopenable, b.Unopenable...)
		fmt.Fprintf(c.stdout, "Batch through %s %d: %d re-sealed, %d already current (so far %d of %d %s)\n",
			kind, b.Next, b.Resealed, b.Current, total.Resealed+total.Current, total.Scanned, what)
		if b.Done {
			return total, nil
		}
		after = b.Next
	}
}
