// Package pgtest starts a throwaway PostgreSQL cluster for tests: its own
// data directory in a temp dir, a free port on 127.0.0.1, a unix socket in
// that temp dir, and a random superuser password, so tests never touch a
// system cluster and never need one.
//
// It owns finding the PostgreSQL server binaries (initdb, postgres, createdb,
// dropdb, psql under /usr/lib/postgresql/*/bin or on $PATH), running them as
// the `postgres` user when the tests run as root (initdb and postgres refuse
// to run as root), the cluster's life (Start, Stop, Start again on the same
// data and port, Close), and one fresh database per test (NewDatabase).
//
// Use Start for a cluster of one test (stopped and removed by t.Cleanup), or
// Shared for one cluster per test binary; a package that calls Shared wraps
// its tests with Main in TestMain so the cluster is stopped and its files
// removed when the binary ends:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// When no PostgreSQL binaries are found, the tests that need them fail with
// a message saying what to install when $CI is "true" (CI must run them),
// and are skipped otherwise (a developer machine without PostgreSQL).
// `make deps` installs Debian's postgresql package.
package pgtest
