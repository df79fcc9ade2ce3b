package pgtest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// NewDatabase creates a fresh, empty database for one test and returns its
// URL (the superuser, over TCP on 127.0.0.1). The database is dropped when
// the test ends, ending sessions still connected to it.
func (c *Cluster) NewDatabase(tb testing.TB) (dsn string) {
	tb.Helper()
	name := c.dbName(tb.Name())
	if out, err := c.tool("createdb", "-T", "template0", name); err != nil {
		tb.Fatalf("pgtest: createdb %s: %v\n%s", name, err, out)
	}
	tb.Cleanup(func() {
		c.mu.Lock()
		up := c.running()
		c.mu.Unlock()
		if up {
			// --force (PostgreSQL 13+) ends sessions a server under test
			// may still hold.
			_, _ = c.tool("dropdb", "--force", "--if-exists", name)
		}
	})
	return c.dsnFor(name)
}

// dbName makes a database name from a test name: lower-case letters, digits
// and _, short enough for PostgreSQL's 63-byte limit, and unique in the
// cluster through a sequence number.
func (c *Cluster) dbName(test string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(test) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 40 {
		s = s[:40]
	}
	return "t_" + s + "_" + strconv.FormatInt(c.dbSeq.Add(1), 10)
}

// Psql runs SQL in the database at dsn through psql and returns its output
// unaligned, tuples only (psql -At): one row a line, columns split by |.
// It fails the test on any error, including an SQL error.
func (c *Cluster) Psql(tb testing.TB, dsn, sql string) string {
	tb.Helper()
	out, err := c.tool("psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql)
	if err != nil {
		tb.Fatalf("pgtest: psql %q: %v\n%s", sql, err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

// tool runs a client program of the bin dir against the cluster over TCP
// as the superuser. Clients need not run as the postgres user: they
// authenticate with the password.
func (c *Cluster) tool(name string, args ...string) ([]byte, error) {
	cmd := c.as.command(c.bin, c.dir, name, args...)
	cmd.SysProcAttr.Credential = nil
	cmd.Dir = ""
	cmd.Env = append(cmd.Env,
		"PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(c.Port),
		"PGUSER="+Superuser, "PGPASSWORD="+c.Password,
		"PGDATABASE=postgres", "PGCONNECT_TIMEOUT=10", "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
