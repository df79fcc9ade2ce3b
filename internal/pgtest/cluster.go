package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Superuser is the name of the cluster's superuser (initdb -U).
const Superuser = "postgres"

// startTimeout bounds how long the server may take to accept connections;
// the test machines are small and shared, so it is generous.
const startTimeout = 60 * time.Second

// Cluster is one running throwaway PostgreSQL server.
type Cluster struct {
	// DSN connects to the cluster's "postgres" database as the superuser.
	DSN string
	// Port is the TCP port on 127.0.0.1 the server listens on.
	Port int
	// Password is the superuser's password (random per cluster).
	Password string

	dir     string   // temp dir owning everything below
	owner   *os.File // ownerLock, held while the cluster lives
	dataDir string
	logPath string
	bin     string
	as      *runAs

	mu     sync.Mutex
	proc   *exec.Cmd
	exited chan struct{}
	closed bool

	dbSeq atomic.Int64
}

// Start starts a cluster for one test; t.Cleanup stops it and removes its
// files. Without PostgreSQL binaries it fails the test when $CI is "true"
// and skips it otherwise.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	c, err := New()
	if err != nil {
		skipOrFail(tb, err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("pgtest: close cluster: %v", err)
		}
	})
	return c
}

// skipOrFail ends the test for a cluster that cannot start: a skip when
// PostgreSQL is not installed on a developer machine, a failure in CI or
// for any other reason.
func skipOrFail(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrNoPostgres) && os.Getenv("CI") != "true" {
		tb.Skipf("skipped: %v (CI=true makes this a failure)", err)
	}
	tb.Fatalf("%v", err)
}

// New initialises and starts a cluster not tied to a test; the caller
// Closes it.
func New() (*Cluster, error) {
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	as, err := lookupRunAs()
	if err != nil {
		return nil, err
	}
	root := tempRoot(as)
	sweep(root)
	dir, err := os.MkdirTemp(root, "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	owner, err := holdOwnerLock(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{dir: dir, dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "server.log"), bin: bin, as: as, owner: owner}
	if err := c.initdb(); err != nil {
		c.removeFiles()
		return nil, err
	}
	// A port picked free can be taken before the server binds it; try a
	// few.
	for try := 0; ; try++ {
		if c.Port, err = freePort(); err == nil {
			c.DSN = c.dsnFor("postgres")
			err = c.Start()
		}
		if err == nil || try == 2 || !strings.Contains(tail(c.logPath, 20), "could not bind") {
			break
		}
	}
	if err != nil {
		c.removeFiles()
		return nil, err
	}
	return c, nil
}

// removeFiles removes the cluster's temp dir and then lets go of its owner
// lock.
func (c *Cluster) removeFiles() error {
	err := os.RemoveAll(c.dir)
	c.owner.Close()
	return err
}

// initdb creates the data directory. The superuser gets a random password
// for TCP (scram-sha-256), so another local user cannot use the cluster;
// the unix socket lives in the cluster's own 0700 dir and trusts its user.
func (c *Cluster) initdb() error {
	pw := make([]byte, 16)
	rand.Read(pw)
	c.Password = hex.EncodeToString(pw)
	pwFile := filepath.Join(c.dir, "pwfile")
	if err := os.WriteFile(pwFile, []byte(c.Password+"\n"), 0o600); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := c.as.chownAll(c.dir); err != nil {
		return fmt.Errorf("pgtest: give %s to the postgres user: %w", c.dir, err)
	}
	cmd := c.as.command(c.bin, c.dir, "initdb",
		"-D", c.dataDir, "-U", Superuser, "--pwfile="+pwFile,
		"--auth-local=trust", "--auth-host=scram-sha-256",
		"-E", "UTF8", "--no-locale",
		// --no-sync: nothing needs the files on disk before the server
		// runs, and a crash of the machine throws the cluster away anyway.
		"--no-sync")
	out, err := cmd.CombinedOutput()
	os.Remove(pwFile)
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

// serverArgs are the postgres command line. fsync, synchronous_commit and
// full_page_writes are off for speed: they protect committed data against
// a crash of the machine or the OS, or (synchronous_commit) of the server
// in the fraction of a second before its WAL writer runs, and a test
// cluster lives in a temp dir such a crash throws away anyway. Stop is a
// clean shutdown that writes everything, so "the database stopped and
// started again" loses nothing; only Kill may lose the last commits.
func (c *Cluster) serverArgs() []string {
	return []string{
		"-D", c.dataDir,
		"-p", strconv.Itoa(c.Port),
		"-k", c.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
		"-c", "shared_buffers=32MB",
		"-c", "log_min_messages=warning",
	}
}

// Start starts the server on the cluster's data and port (again, after
// Stop). It returns once the server accepts connections.
func (c *Cluster) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("pgtest: Start on a closed cluster")
	}
	if c.running() {
		return nil
	}
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logf.Close()
	cmd := c.as.command(c.bin, c.dir, "postgres", c.serverArgs()...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies without stopping the server (a panic, go
	// test's timeout), the kernel sends the server SIGQUIT, PostgreSQL's
	// immediate shutdown, instead of leaving it running.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	c.proc, c.exited = cmd, exited
	if err := c.waitReady(); err != nil {
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		<-exited
		return err
	}
	return nil
}

// running reports whether the server process is alive; c.mu is held.
func (c *Cluster) running() bool {
	if c.proc == nil {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// waitReady waits until postmaster.pid says "ready" (PostgreSQL 10 and
// later write the state as its 8th line) and the port accepts a TCP
// connection.
func (c *Cluster) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	pidFile := filepath.Join(c.dataDir, "postmaster.pid")
	for {
		select {
		case <-c.exited:
			return fmt.Errorf("pgtest: postgres exited at start:\n%s", tail(c.logPath, 20))
		default:
		}
		if data, err := os.ReadFile(pidFile); err == nil {
			lines := strings.Split(string(data), "\n")
			if len(lines) > 7 && strings.TrimSpace(lines[7]) == "ready" {
				conn, err := net.DialTimeout("tcp", c.addr(), time.Second)
				if err == nil {
					conn.Close()
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres not ready after %v:\n%s", startTimeout, tail(c.logPath, 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the server down ("fast": open sessions are ended, committed
// data kept) and waits for it to exit. Start runs it again.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopLocked(syscall.SIGINT)
}

// Kill ends the server at once with SIGKILL, as a crash would; Start runs
// it again (PostgreSQL recovers from its WAL). With synchronous_commit off,
// commits of the last fraction of a second may be lost: a test of what a
// client was told is durable stops the server with Stop instead.
func (c *Cluster) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopLocked(syscall.SIGKILL)
}

func (c *Cluster) stopLocked(sig syscall.Signal) error {
	if !c.running() {
		return nil
	}
	if sig == syscall.SIGKILL {
		// The postmaster's children notice it is gone and exit; kill the
		// whole process group so none lingers holding the port.
		_ = syscall.Kill(-c.proc.Process.Pid, syscall.SIGKILL)
	} else {
		_ = c.proc.Process.Signal(sig)
	}
	select {
	case <-c.exited:
		return nil
	case <-time.After(30 * time.Second):
	}
	// Fast shutdown stuck (a busy machine): immediate shutdown.
	_ = c.proc.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-c.proc.Process.Pid, syscall.SIGKILL)
		<-c.exited
		return errors.New("pgtest: postgres did not stop; killed")
	}
}

// Close stops the server and removes the cluster's files.
func (c *Cluster) Close() error {
	err := c.Stop()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return errors.Join(err, c.removeFiles())
}

// Log is what the server logged so far (warnings and worse).
func (c *Cluster) Log() string {
	data, _ := os.ReadFile(c.logPath)
	return string(data)
}

func (c *Cluster) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)) }

// dsnFor is the URL of one database of the cluster, as the superuser.
func (c *Cluster) dsnFor(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(Superuser, c.Password),
		Host:     c.addr(),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// tempRoot is where the cluster's temp dir goes: $TMPDIR, unless the
// server runs as another user (root's tests) who cannot pass through one
// of its parents (a TMPDIR under /root), then /tmp.
func tempRoot(as *runAs) string {
	root := os.TempDir()
	if as == nil {
		return root
	}
	for d := root; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if d == filepath.Dir(d) {
			return root
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
