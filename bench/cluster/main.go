// Command cluster starts a private 3-node MariaDB Galera cluster (package internal/testcluster) for the
// benchmarks, prints one DSN per node and a database created on it, and stops the cluster on
// Ctrl-C or SIGTERM.
//
//	go run ./bench/cluster -dir /tmp/galera
//	RUNSDESK_DSN='<DSN of node 1>' go run ./bench/submit …
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"runsdesk/internal/testcluster"
)

func main() {
	dir := flag.String("dir", "", "directory for the nodes' data (required; created if missing)")
	nodes := flag.Int("nodes", 3, "cluster size")
	flag.Parse()
	if err := run(*dir, *nodes); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(dir string, nodes int) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	began := time.Now()
	c, err := testcluster.Start(ctx, testcluster.Options{Dir: dir, Nodes: nodes, Logger: logger})
	if err != nil {
		return err
	}
	fmt.Printf("%d nodes synced in %s\n", c.Size(), time.Since(began).Round(100*time.Millisecond))
	for i := 1; i <= c.Size(); i++ {
		fmt.Printf("node %d: %s\n", i, c.DSN(i, ""))
	}
	pool, err := sql.Open("mysql", c.DSN(1, ""))
	if err == nil {
		_, err = pool.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS runsdesk CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
		pool.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster: create database runsdesk:", err)
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return c.Stop(stopCtx)
}
