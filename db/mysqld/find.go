package mysqld

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNoServer is returned by Start when neither mariadbd nor mysqld can be found.
var ErrNoServer = errors.New("no MariaDB/MySQL server found on PATH: install it (Debian/Ubuntu: apt-get install mariadb-server; macOS: brew install mariadb)")

type flavor int

const (
	mariaDB flavor = iota
	mySQL
)

func (f flavor) String() string {
	if f == mySQL {
		return "MySQL"
	}
	return "MariaDB"
}

// binaries is what Start needs from an installation.
type binaries struct {
	server  string
	flavor  flavor
	version string
	// installDB is mariadb-install-db for MariaDB; empty for MySQL, whose
	// server initialises a data dir itself (--initialize-insecure).
	installDB string
}

func defaultLookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	// Debian installs mariadbd in /usr/sbin, which is often missing from an
	// ordinary user's PATH; some distributions use /usr/libexec.
	for _, dir := range []string{"/usr/sbin", "/usr/libexec"} {
		p := filepath.Join(dir, name)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// findBinaries locates the server, tells MariaDB from MySQL by its --version
// output, and for MariaDB finds the install script, preferring the one that
// sits next to the server.
func findBinaries(ctx context.Context, lookPath func(string) (string, error)) (binaries, error) {
	var b binaries
	for _, name := range []string{"mariadbd", "mysqld"} {
		if p, err := lookPath(name); err == nil {
			b.server = p
			break
		}
	}
	if b.server == "" {
		return b, ErrNoServer
	}
	out, err := exec.CommandContext(ctx, b.server, "--version").CombinedOutput()
	if err != nil {
		return b, fmt.Errorf("run %s --version: %w: %s", b.server, err, strings.TrimSpace(string(out)))
	}
	b.version = strings.TrimSpace(string(out))
	if filepath.Base(b.server) != "mariadbd" && !strings.Contains(b.version, "MariaDB") {
		b.flavor = mySQL
		return b, nil
	}
	b.flavor = mariaDB
	names := []string{"mariadb-install-db", "mysql_install_db"}
	serverDir := filepath.Dir(b.server)
	for _, dir := range []string{serverDir, filepath.Join(serverDir, "..", "bin"), filepath.Join(serverDir, "..", "scripts")} {
		for _, name := range names {
			if p := filepath.Join(dir, name); isExecutable(p) {
				b.installDB = filepath.Clean(p)
				return b, nil
			}
		}
	}
	for _, name := range names {
		if p, err := lookPath(name); err == nil {
			b.installDB = p
			return b, nil
		}
	}
	return b, fmt.Errorf("found the MariaDB server %s but not mariadb-install-db next to it or on PATH: install the complete server package (Debian/Ubuntu: apt-get install mariadb-server)", b.server)
}
