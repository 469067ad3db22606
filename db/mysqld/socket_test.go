package mysqld

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSocketPath(t *testing.T) {
	short := "/srv/runsdesk/var/mysql"
	if got, err := socketPath(short); err != nil || got != short+"/mysqld.sock" {
		t.Errorf("socketPath(%q) = %q, %v; want %q, nil", short, got, err, short+"/mysqld.sock")
	}
	long := "/" + strings.Repeat("d", 100) + "/mysql"
	got, err := socketPath(long)
	if err != nil {
		t.Fatalf("socketPath(long): %v", err)
	}
	if filepath.Dir(got) != filepath.Clean(os.TempDir()) || len(got) > maxSocketPath || !strings.HasPrefix(filepath.Base(got), "runsdesk-mysqld-") {
		t.Errorf("socketPath(long) = %q, want a short runsdesk-mysqld-*.sock in %s", got, os.TempDir())
	}
	again, _ := socketPath(long)
	other, _ := socketPath(long + "2")
	if again != got || other == got {
		t.Errorf("socketPath is not a function of the data dir: %q, %q, %q", got, again, other)
	}
}

func TestLongDataDirServes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for len(dir) <= maxSocketPath {
		dir = filepath.Join(dir, "a-rather-long-directory-name")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("Start(%s): %v", dir, err)
	}
	if filepath.Dir(s.Socket()) != filepath.Clean(os.TempDir()) {
		t.Errorf("Socket() = %q, want it in %s", s.Socket(), os.TempDir())
	}
	if err := s.EnsureDatabase(ctx, "x"); err != nil {
		t.Errorf("EnsureDatabase over the short socket: %v", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(s.Socket()); !os.IsNotExist(err) {
		t.Errorf("socket %s still exists after Stop", s.Socket())
	}
}
