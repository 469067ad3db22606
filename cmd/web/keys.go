package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
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

// runKeysRotate seals every stored value of every sealed column (db.SealedColumns) again with
// the active key, in batches, printing progress; with --seal-clear cleartext values too. Rows
// whose stored values do not open are named and left.
func runKeysRotate(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("keys rotate", "[--batch N] [--seal-clear] [flags]")
	var dbc database
	var batch int
	var sealClear bool
	f.bind.database(&dbc)
	f.bind.Int(&batch, "batch")
	f.bind.Bool(&sealClear, "seal-clear")
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
		d := &desk{c: c, name: "keys rotate", audit: db.NewAudit(conn.pool, nil)}
		var unopenable, clear []string
		var resealed int64
		for _, column := range db.SealedColumns() {
			total, err := store.ResealAll(ctx, column, batch, sealClear, func(b, total db.ResealBatch) {
				fmt.Fprintf(c.stdout, "%s: batch through row %d: %d re-sealed, %d already current (so far %d of %d values)\n",
					column.Name(), b.Next, b.Resealed, b.Current, total.Resealed+total.Current, total.Scanned)
			})
			if err != nil {
				if aerr := d.record(ctx, "failure", fmt.Sprintf("%s: %v", column.Name(), err)); aerr != nil {
					return d.fail("%v; %v", err, aerr)
				}
				return d.fail("%v", err)
			}
			resealed += int64(total.Resealed)
			fmt.Fprintf(c.stdout, "%s: %d re-sealed with key %q, %d already were, %d in clear.\n",
				column.Name(), total.Resealed, conn.keys.Active(), total.Current, total.Clear)
			if n := len(total.Unopenable); n > 0 {
				unopenable = append(unopenable, fmt.Sprintf("%s: %d (%s)", column.Name(), n, strings.Join(total.Unopenable, ", ")))
			}
			if total.Clear > 0 {
				clear = append(clear, fmt.Sprintf("%s: %d", column.Name(), total.Clear))
			}
		}
		outcome := "success"
		if len(unopenable) > 0 {
			outcome = "failure"
		}
		if err := d.record(ctx, outcome, fmt.Sprintf("%d value(s) re-sealed with key %s; unopenable: %s; in clear: %s", resealed,
			conn.keys.Active(), orNone(unopenable), orNone(clear))); err != nil {
			return d.fail("%v", err)
		}
		fmt.Fprintf(c.stdout, "Rotation done: every sealed column re-sealed with key %q.\n", conn.keys.Active())
		if len(clear) > 0 {
			fmt.Fprintf(c.stdout, "Values stored in clear (written before keys were set) were left so; seal them with --seal-clear: %s\n",
				strings.Join(clear, "; "))
		}
		if len(unopenable) > 0 {
			return c.failf("keys rotate", "values that do not open were left as stored: %s", strings.Join(unopenable, "; "))
		}
		return exitOK
	})
}

// orNone is items joined with "; ", or "none".
func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, "; ")
}

// runKeysStatus prints, per sealed column, how many rows are sealed with each key id, marking
// the ids missing from the key set; it fails when one is missing, as serve would refuse.
func runKeysStatus(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("keys status", "[flags]")
	var dbc database
	var format string
	f.bind.database(&dbc)
	f.bind.Choice(&format, "format", listFormats...)
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	return onMigratedDatabase(ctx, c, f, "keys status", dbc, func(conn *conn) int {
		counts, err := db.New(conn.pool).SealedKeyCounts(ctx)
		if err != nil {
			return c.failf("keys status", "%v", err)
		}
		if format == "table" {
			fmt.Fprintf(c.stdout, "Active key: %q\n", conn.keys.Active())
		}
		if code := printList(c, "keys status", format, keyListing(conn.keys), counts); code != exitOK {
			return code
		}
		if err := missingKeysError(db.MissingKeys(counts, conn.keys)); err != nil {
			return c.failf("keys status", "%v", err)
		}
		return exitOK
	})
}

// keyListing is how keys status prints the rows of a column sealed with one key id, as keys
// has it: configured, MISSING, and whether it is the active key.
func keyListing(keys *seal.Keyring) listing[db.KeyCount] {
	return listing[db.KeyCount]{noun: "sealed rows", fields: []field[db.KeyCount]{
		{header: "COLUMN", key: "column", cell: func(k db.KeyCount) string { return k.Column.Name() }},
		{header: "KEY", key: "key_id", cell: func(k db.KeyCount) string { return k.KeyID }},
		{header: "ROWS", key: "rows", cell: func(k db.KeyCount) string { return strconv.FormatInt(k.Rows, 10) }, value: func(k db.KeyCount) any { return k.Rows }},
		{header: "STATE", key: "configured", cell: func(k db.KeyCount) string {
			return map[bool]string{true: "configured", false: "MISSING"}[keys.Has(k.KeyID)]
		}, value: func(k db.KeyCount) any { return keys.Has(k.KeyID) }},
		{key: "active", value: func(k db.KeyCount) any { return k.KeyID == keys.Active() }},
	}}
}

// keysCoverRows refuses a key set that lacks a key rows are sealed with (serve's check at
// start), naming the ids and the counts.
func keysCoverRows(ctx context.Context, conn *conn) error {
	counts, err := db.New(conn.pool).SealedKeyCounts(ctx)
	if err != nil {
		return err
	}
	return missingKeysError(db.MissingKeys(counts, conn.keys))
}

// missingKeysError is the sealing_key_missing refusal of missing, or nil when none is.
func missingKeysError(missing []db.KeyCount) error {
	if len(missing) == 0 {
		return nil
	}
	rows := map[string]int64{}
	var ids, parts []string
	for _, k := range missing {
		if _, ok := rows[k.KeyID]; !ok {
			ids = append(ids, k.KeyID)
		}
		rows[k.KeyID] += k.Rows
		parts = append(parts, fmt.Sprintf("%s %d with %q", k.Column.Name(), k.Rows, k.KeyID))
	}
	for i, id := range ids {
		ids[i] = fmt.Sprintf("%q (%d row(s))", id, rows[id])
	}
	return fmt.Errorf("%s: rows are sealed with key id(s) missing from RUNSDESK_KEYS: %s [%s]; add the key(s) back to RUNSDESK_KEYS",
		runtime.CodeSealingKeyMissing, strings.Join(ids, ", "), strings.Join(parts, "; "))
}
