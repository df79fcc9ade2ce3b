package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// ErrNoPostgres means no PostgreSQL server binaries were found.
var ErrNoPostgres = errors.New("pgtest: no PostgreSQL server binaries (initdb, postgres) found under /usr/lib/postgresql/*/bin or on $PATH; install Debian's postgresql package (make deps does)")

// binGlob is where Debian's packages put each major version's binaries (a
// variable so a test can point it at nothing).
var binGlob = "/usr/lib/postgresql/*/bin"

// needed are the programs a cluster uses; a directory without any of them
// is not a usable bin dir.
var needed = []string{"initdb", "postgres", "createdb", "dropdb", "psql"}

// findBinDir returns the directory of the newest PostgreSQL found: the
// highest major version under /usr/lib/postgresql, else the directory of
// initdb on $PATH.
func findBinDir() (string, error) {
	dirs, _ := filepath.Glob(binGlob)
	slices.SortFunc(dirs, func(a, b string) int { return majorOf(b) - majorOf(a) })
	for _, d := range dirs {
		if hasAll(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if d := filepath.Dir(p); hasAll(d) {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

// majorOf reads the major version out of /usr/lib/postgresql/<N>/bin.
func majorOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func hasAll(dir string) bool {
	for _, name := range needed {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// runAs is the user the server programs run as: nil (this process's user)
// unless this process is root, which initdb and postgres refuse; then the
// `postgres` user that Debian's package creates.
type runAs struct {
	cred     *syscall.Credential
	uid, gid int
}

func lookupRunAs() (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses root, but there is no postgres user to run it as (install Debian's postgresql package): %w", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: postgres user ids: %w", err)
	}
	return &runAs{
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		uid:  uid, gid: gid,
	}, nil
}

// chownAll gives the tree at dir to the user the server runs as.
func (r *runAs) chownAll(dir string) error {
	if r == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, r.uid, r.gid)
	})
}

// command builds a command of the bin dir that runs as r, in dir (the
// cluster's own temp dir: the caller's working directory may be closed to
// the postgres user).
func (r *runAs) command(bin, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if r != nil {
		cmd.SysProcAttr.Credential = r.cred
	}
	// A clean environment but for the few variables the tools read, so a
	// developer's PGHOST, PGDATABASE or PGSERVICE cannot point a command at
	// another server.
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	return cmd
}

// tail returns the last n lines of a log file, for error messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
