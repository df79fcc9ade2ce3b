package integration

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// replicaConfig is the policy the first replica imports into the empty
// database: read_file is denied and `ls` allowed, which no default policy
// decides, so "this replica decides with the shared policy" shows in one
// evaluation; make asks. The comment inside the section must survive
// edits (the section is kept as YAML text).
const replicaConfig = `permissions:
  # team policy: edits must keep this comment
  enabled: true
  schema: tiered_policy
  defaults: {"*": ask}
  tools:
    read_file: deny
    bash: ask
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
`

// replicaSet is several toolgate processes on one PostgreSQL database,
// each with its own config dir and port, as replicas behind a load
// balancer would be.
type replicaSet struct {
	t   *testing.T
	pg  *pgtest.Cluster
	dsn string
	r   []*Server
}

// startReplicas starts n replicas on a fresh database of pg. The first one
// imports replicaConfig into the empty database and makes the admin token;
// the others start on empty config dirs holding only that token (what an
// operator hands each replica). Replica 1 reads the database URL from
// $TOOLGATE_DATABASE_URL, the others from --database-url. dsnOf, if not
// nil, may give a replica another URL to the same database (a proxy).
// args are extra flags for every replica.
func startReplicas(t *testing.T, pg *pgtest.Cluster, n int, dsnOf func(i int, dsn string) string, args ...string) *replicaSet {
	t.Helper()
	rs := &replicaSet{t: t, pg: pg, dsn: pg.NewDatabase(t)}
	for i := range n {
		dsn := rs.dsn
		if dsnOf != nil {
			dsn = dsnOf(i, dsn)
		}
		rs.r = append(rs.r, rs.start(i, dsn, args))
	}
	return rs
}

func (rs *replicaSet) start(i int, dsn string, args []string) *Server {
	t := rs.t
	t.Helper()
	o := ServerOptions{ConfigDir: t.TempDir(), Args: args}
	if i == 0 {
		o.ConfigYAML = replicaConfig
	} else {
		writeFile(t, filepath.Join(o.ConfigDir, "api_token"), rs.r[0].Token+"\n")
	}
	if i == 1 {
		os.Setenv("TOOLGATE_DATABASE_URL", dsn)
		defer os.Unsetenv("TOOLGATE_DATABASE_URL")
	} else {
		o.Args = append([]string{"--database-url", dsn}, args...)
	}
	s := StartServer(t, o)
	if i > 0 && s.Token != rs.r[0].Token {
		t.Fatalf("replica %d: its api_token file was replaced", i)
	}
	return s
}

// makeAll is the call the tests' edits flip: ask under replicaConfig.
var makeAll = map[string]any{"command": "make all"}

// waitLevelOnAll waits until every replica decides a call at want, and
// returns how long each took from start.
func waitLevelOnAll(t *testing.T, rs []*Server, start time.Time, timeout time.Duration, tool string, args map[string]any, want string) []time.Duration {
	t.Helper()
	took := make([]time.Duration, len(rs))
	for i, s := range rs {
		WaitFor(t, timeout, "replica "+strconv.Itoa(i)+" to decide "+tool+" "+want, func() bool {
			return relLevel(t, s, tool, args) == want
		})
		took[i] = time.Since(start)
	}
	return took
}

// addRule creates an allow rule for a bash pattern through one replica and
// returns the status and body.
func addRule(s *Server, id, pattern string) (int, []byte, error) {
	return relDo(s, s.Token, "POST", "/api/v1/permissions/rules",
		map[string]any{"id": id, "tools": []string{"bash"}, "pattern": pattern, "action": "allow"})
}

// ruleIDs lists the rule ids one replica serves.
func ruleIDs(t *testing.T, s *Server) map[string]bool {
	t.Helper()
	st, body, err := relDo(s, s.Token, "GET", "/api/v1/permissions/rules", nil)
	if err != nil || st != 200 {
		t.Fatalf("GET rules: %d %s %v", st, body, err)
	}
	rules := DecodeJSON[struct {
		Rules []struct {
			ID string `json:"id"`
		} `json:"rules"`
	}](t, body).Rules
	ids := map[string]bool{}
	for _, r := range rules {
		ids[r.ID] = true
	}
	return ids
}

// ready is /readyz of one replica with the admin token: its status (0 if
// it does not answer) and body.
func ready(s *Server) (int, string) {
	st, body, err := relDo(s, s.Token, "GET", "/readyz", nil)
	if err != nil {
		return 0, err.Error()
	}
	return st, string(body)
}

// cookieOn copies a signed-in web client's cookies to another replica, as
// a load balancer sending the browser's next request elsewhere would.
func cookieOn(t *testing.T, from *webClient, to *Server) *webClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	fromURL, err1 := url.Parse(from.s.URL)
	toURL, err2 := url.Parse(to.URL)
	if err1 != nil || err2 != nil {
		t.Fatalf("parse URLs: %v %v", err1, err2)
	}
	jar.SetCookies(toURL, from.http.Jar.Cookies(fromURL))
	return &webClient{t: t, s: to, http: &http.Client{Jar: jar}}
}
