package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestNewDatabaseIsFreshAndOwn checks that each NewDatabase is empty and
// separate from the others of the shared cluster, and that the DSN works.
func TestNewDatabaseIsFreshAndOwn(t *testing.T) {
	c := Shared(t)
	a, b := c.NewDatabase(t), c.NewDatabase(t)
	if a == b {
		t.Fatalf("two NewDatabase calls gave the same DSN %s", a)
	}
	c.Psql(t, a, "CREATE TABLE x (v int); INSERT INTO x VALUES (7)")
	if got := c.Psql(t, a, "SELECT v FROM x"); got != "7" {
		t.Errorf("SELECT in a: got %q, want %q", got, "7")
	}
	if got := c.Psql(t, b, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'"); got != "0" {
		t.Errorf("table x seen from database b: got %q tables, want 0", got)
	}
	if got := c.Psql(t, a, "SHOW fsync"); got != "off" {
		t.Errorf("fsync: got %q, want off", got)
	}
	if got := c.Psql(t, a, "SELECT inet_server_addr()"); got != "127.0.0.1" {
		t.Errorf("server address: got %q, want 127.0.0.1", got)
	}
}

// TestSharedIsOne checks that Shared starts one cluster per binary.
func TestSharedIsOne(t *testing.T) {
	if a, b := Shared(t), Shared(t); a != b {
		t.Fatalf("Shared gave two clusters (ports %d and %d)", a.Port, b.Port)
	}
}

// TestPasswordRequired checks that a TCP client without the password is
// refused: another local user cannot use the cluster.
func TestPasswordRequired(t *testing.T) {
	c := Shared(t)
	dsn := c.NewDatabase(t)
	bare := strings.Replace(dsn, ":"+c.Password+"@", "@", 1)
	if bare == dsn {
		t.Fatalf("DSN %q does not carry the password", dsn)
	}
	cmd := exec.Command(c.bin+"/psql", "-X", "-At", "-w", "-d", bare, "-c", "SELECT 1")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PGCONNECT_TIMEOUT=5"}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("psql without a password got in: %s", out)
	}
	if !strings.Contains(string(out), "password") {
		t.Errorf("psql without a password failed, but not for the password: %s", out)
	}
}

// TestStopStartKeepsData checks that a cluster stopped and started again
// is back on the same port with committed data, and that it refuses
// connections while stopped.
func TestStopStartKeepsData(t *testing.T) {
	c := Start(t)
	dsn := c.NewDatabase(t)
	c.Psql(t, dsn, "CREATE TABLE x (v text); INSERT INTO x VALUES ('kept')")
	port := c.Port
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if conn, err := net.DialTimeout("tcp", c.addr(), time.Second); err == nil {
		conn.Close()
		t.Fatalf("port %d still accepts connections after Stop", c.Port)
	}
	if _, err := c.tool("psql", "-X", "-d", dsn, "-c", "SELECT 1"); err == nil {
		t.Fatal("psql worked against a stopped cluster")
	}
	if err := c.Start(); err != nil {
		t.Fatalf("Start again: %v", err)
	}
	if c.Port != port {
		t.Errorf("port after restart: got %d, want %d", c.Port, port)
	}
	if got := c.Psql(t, dsn, "SELECT v FROM x"); got != "kept" {
		t.Errorf("data after restart: got %q, want %q", got, "kept")
	}
}

// TestCloseRemovesFiles checks that Close stops the server and removes its
// temp dir.
func TestCloseRemovesFiles(t *testing.T) {
	c, err := New()
	if err != nil {
		skipOrFail(t, err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Errorf("temp dir %s after Close: stat err %v, want not exist", c.dir, err)
	}
	if conn, err := net.DialTimeout("tcp", c.addr(), time.Second); err == nil {
		conn.Close()
		t.Errorf("port %d still accepts connections after Close", c.Port)
	}
	if err := c.Start(); err == nil {
		t.Error("Start after Close: got nil error, want one")
	}
}

func TestDBName(t *testing.T) {
	c := &Cluster{}
	tests := []struct {
		note, test, want string
	}{
		{"subtest slash and capitals", "TestX/Sub_Case", "t_testx_sub_case_1"},
		{"quote and space cannot reach SQL", `Test"; DROP x`, "t_test___drop_x_2"},
		{"long names are cut to fit 63 bytes", strings.Repeat("a", 80), "t_" + strings.Repeat("a", 40) + "_3"},
	}
	for _, tc := range tests {
		if got := c.dbName(tc.test); got != tc.want {
			t.Errorf("%s: dbName(%q) = %q, want %q", tc.note, tc.test, got, tc.want)
		}
	}
}

// recordTB records Skipf and Fatalf instead of ending the test; each ends
// skipOrFail early by panicking, as the real ones end the goroutine.
type recordTB struct {
	testing.TB
	skipped, failed string
}

type stopped struct{}

func (r *recordTB) Helper() {}
func (r *recordTB) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	panic(stopped{})
}
func (r *recordTB) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(stopped{})
}

// TestWithoutPostgres checks that no binaries means ErrNoPostgres, a skip
// on a developer machine and a failure naming the package when CI=true.
func TestWithoutPostgres(t *testing.T) {
	saved := binGlob
	t.Cleanup(func() { binGlob = saved })
	binGlob = filepath.Join(t.TempDir(), "*", "bin")
	t.Setenv("PATH", t.TempDir())
	if _, err := New(); !errors.Is(err, ErrNoPostgres) {
		t.Fatalf("New without binaries: %v, want ErrNoPostgres", err)
	}
	tests := []struct {
		note, ci          string
		wantSkip, wantErr bool
	}{
		{"developer machine: skip", "", true, false},
		{"CI=false is not CI: skip", "false", true, false},
		{"CI: fail", "true", false, true},
	}
	for _, tc := range tests {
		t.Setenv("CI", tc.ci)
		r := &recordTB{TB: t}
		func() {
			defer func() {
				if p := recover(); p != nil && p != (stopped{}) {
					panic(p)
				}
			}()
			Start(r)
		}()
		if (r.skipped != "") != tc.wantSkip || (r.failed != "") != tc.wantErr {
			t.Errorf("%s: skipped %q failed %q", tc.note, r.skipped, r.failed)
		}
		if msg := r.skipped + r.failed; !strings.Contains(msg, "postgresql package") {
			t.Errorf("%s: message %q does not say what to install", tc.note, msg)
		}
	}
}

// TestTempRootReachable checks that a cluster run as the postgres user is
// not put under a TMPDIR that user cannot pass through.
func TestTempRootReachable(t *testing.T) {
	closed := filepath.Join(t.TempDir(), "closed")
	if err := os.MkdirAll(filepath.Join(closed, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's own parent is 0700: an open path needs its own dir.
	open, err := os.MkdirTemp("/tmp", "pgtest-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	as := &runAs{}
	tests := []struct {
		note, tmpdir string
		as           *runAs
		want         string
	}{
		{"as ourselves: TMPDIR as is", filepath.Join(closed, "tmp"), nil, filepath.Join(closed, "tmp")},
		{"as postgres, closed parent: /tmp", filepath.Join(closed, "tmp"), as, "/tmp"},
		{"as postgres, open path: TMPDIR", open, as, open},
	}
	for _, tc := range tests {
		t.Setenv("TMPDIR", tc.tmpdir)
		if got := tempRoot(tc.as); got != tc.want {
			t.Errorf("%s: tempRoot = %q, want %q", tc.note, got, tc.want)
		}
	}
}

// TestSweepRemovesOnlyAbandonedDirs checks the sweep of leftovers: a dir
// whose owner lock is free and whose server is gone goes; one locked by a
// live owner, one without a lock file and one whose postmaster runs stay.
func TestSweepRemovesOnlyAbandonedDirs(t *testing.T) {
	root := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	abandonedDir := mk("pgtest-abandoned")
	f, err := holdOwnerLock(abandonedDir)
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // the owner died
	held := mk("pgtest-held")
	owner, err := holdOwnerLock(held)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	noLock := mk("pgtest-nolock")
	running := mk("pgtest-running")
	if f, err = holdOwnerLock(running); err != nil {
		t.Fatal(err)
	}
	f.Close()
	pid := strconv.Itoa(os.Getpid()) + "\n/data\n"
	if err := os.WriteFile(filepath.Join(running, "data", "postmaster.pid"), []byte(pid), 0o600); err != nil {
		t.Fatal(err)
	}
	other := mk("other-abandoned")
	if f, err = holdOwnerLock(other); err != nil {
		t.Fatal(err)
	}
	f.Close()

	sweep(root)
	tests := []struct {
		note, dir string
		want      bool
	}{
		{"owner dead, no server: removed", abandonedDir, false},
		{"owner alive: kept", held, true},
		{"no lock file: kept", noLock, true},
		{"postmaster alive: kept", running, true},
		{"not a pgtest dir: kept", other, true},
	}
	for _, tc := range tests {
		_, err := os.Stat(tc.dir)
		if got := err == nil; got != tc.want {
			t.Errorf("%s: exists = %v, want %v", tc.note, got, tc.want)
		}
	}
}
