package main

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestReadyzFailsWhileDeafToOtherReplicas: a replica whose listening
// connection is gone and cannot be made again (here: the database takes no
// new connections; in production max_connections reached, a pooler that
// drops LISTEN, a firewall on new flows) hears of no edit, revocation or
// answer made through another replica, so it decides with a stale policy
// while its pool still answers pings. /readyz must say so (503) so the load
// balancer takes it out, as the store/pg notes planned (db.Ping AND
// db.Listener().Connected()); it answered 200 "ready".
func TestReadyzFailsWhileDeafToOtherReplicas(t *testing.T) {
	cluster := pgtest.Shared(t)
	dsn := cluster.NewDatabase(t)
	c := testConfig(t)
	c.databaseURL = dsn
	if err := os.MkdirAll(c.configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	r := startReplica(t, c)
	if st, out := r.do(t, "GET", "/readyz", nil); st != 200 {
		t.Fatalf("/readyz before: %d %v", st, out)
	}
	// No new connection to this database; the listening one is ended (the
	// pool keeps its idle connections, so pings still pass).
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	cluster.Psql(t, u.String(), `ALTER DATABASE "`+name+`" ALLOW_CONNECTIONS false`)
	killed := cluster.Psql(t, u.String(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = '`+name+`' AND query LIKE 'LISTEN%'`)
	if killed != "1" {
		t.Fatalf("listening connections ended: %q, want 1", killed)
	}
	time.Sleep(time.Second) // the listener has failed to reconnect by now
	st, out := r.do(t, "GET", "/readyz", nil)
	if st != 503 {
		t.Errorf("/readyz while the replica cannot listen for other replicas' changes: %d %v; want 503", st, out)
	}
}
