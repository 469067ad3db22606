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

// runKeysRotate seals every stored run state and queued request again with the active key,
// in batches, printing progress; runs whose stored values do not open are named and left.
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
		var total db.ResealBatch
		for after := int64(0); ; {
			b, err := store.Reseal(ctx, after, batch)
			if err != nil {
				return c.failf("keys rotate", "%v", err)
			}
			total.Scanned += b.Scanned
			total.Resealed += b.Resealed
			total.Current += b.Current
			total.Unopenable = append(total.Unopenable, b.Unopenable...)
			fmt.Fprintf(c.stdout, "Batch through run %d: %d re-sealed, %d already current (so far %d of %d runs with state)\n",
				b.Next, b.Resealed, b.Current, total.Resealed+total.Current, total.Scanned)
			if b.Done {
				break
			}
			after = b.Next
		}
		fmt.Fprintf(c.stdout, "Rotation done: %d run(s) re-sealed with key %q, %d already were.\n",
			total.Resealed, conn.keys.Active(), total.Current)
		if n := len(total.Unopenable); n > 0 {
			return c.failf("keys rotate", "%d run(s) hold state that does not open and were left as stored: %s",
				n, strings.Join(total.Unopenable, ", "))
		}
		return exitOK
	})
}
