package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// loadConfig mixes allow, ask and deny decisions.
const loadConfig = `permissions:
  enabled: true
  schema: tiered_policy
  defaults: {"*": ask}
  tools:
    read_file: allow
    bash: ask
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
    - {id: no_env, tools: [read_file], pattern: 're:\.env$', action: deny}
  external_directory: {"*": ask}
`

// loadCounters count what the workload did and what went wrong.
type loadCounters struct {
	evals, edits, checks, answered, errors atomic.Int64
	mu                                     sync.Mutex
	firstErrors                            []string
}

func (c *loadCounters) fail(format string, a ...any) {
	c.errors.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.firstErrors) < 10 {
		c.firstErrors = append(c.firstErrors, fmt.Sprintf(format, a...))
	}
}

var loadCalls = []map[string]any{
	{"tool_name": "bash", "tool_args": map[string]any{"command": "ls -la"}},
	{"tool_name": "bash", "tool_args": map[string]any{"command": "make build && rm -rf /"}},
	{"tool_name": "read_file", "tool_args": map[string]any{"path": "src/main.go"}},
	{"tool_name": "read_file", "tool_args": map[string]any{"path": ".env"}},
	{"tool_name": "read_file", "tool_args": map[string]any{"path": "/etc/hosts"}},
	{"tool_name": "custom", "tool_args": map[string]any{}},
}

// runLoad drives the mixed workload until stop closes.
func runLoad(t *testing.T, s *Server, stop <-chan struct{}, c *loadCounters, withApprovals bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ { // evaluators
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				st, body, err := relDo(s, s.Token, "POST", "/api/v1/evaluate", loadCalls[(i+w)%len(loadCalls)])
				if err != nil || st != 200 {
					c.fail("evaluate: %d %.200s %v", st, body, err)
					continue
				}
				c.evals.Add(1)
			}
		}(w)
	}
	wg.Add(1)
	go func() { // a policy editor: create and delete rules
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("load_%d", i)
			st, body, err := relDo(s, s.Token, "POST", "/api/v1/permissions/rules",
				map[string]any{"id": id, "tools": []string{"bash"}, "pattern": "echo " + id, "action": "allow"})
			if err != nil || st != 201 {
				c.fail("create rule: %d %.200s %v", st, body, err)
				continue
			}
			st, body, err = relDo(s, s.Token, "DELETE", "/api/v1/permissions/rules/"+id, nil)
			if err != nil || st >= 300 {
				c.fail("delete rule: %d %.200s %v", st, body, err)
			}
			c.edits.Add(2)
		}
	}()
	if withApprovals {
		wg.Add(1)
		go func() { defer wg.Done(); runChecks(t, s, stop, c) }()
	}
	return &wg
}

// runChecks sends checks that ask and answers each through a websocket
// client; every approval must be answered exactly once.
func runChecks(t *testing.T, s *Server, stop <-chan struct{}, c *loadCounters) {
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+s.Addr+"/ws", http.Header{"Origin": {s.URL}, "Authorization": {"Bearer " + s.Token}})
	if err != nil {
		c.fail("websocket: %v", err)
		return
	}
	defer ws.Close()
	var mu sync.Mutex
	seen := map[string]int{}
	go func() {
		for {
			var m struct {
				Type     string `json:"type"`
				Approval struct {
					ID string `json:"id"`
				} `json:"approval"`
			}
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if json.Unmarshal(data, &m) != nil || m.Type != "approval.requested" {
				continue
			}
			mu.Lock()
			seen[m.Approval.ID]++
			mu.Unlock()
			_ = ws.WriteJSON(map[string]any{"type": "approval.decide", "id": m.Approval.ID, "choice": "deny"})
		}
	}()
	ids := map[string]bool{}
	for i := 0; ; i++ {
		select {
		case <-stop:
			mu.Lock()
			defer mu.Unlock()
			for id := range ids {
				if seen[id] != 1 {
					c.fail("approval %s pushed %d times", id, seen[id])
				}
			}
			c.answered.Add(int64(len(ids)))
			return
		default:
		}
		st, body, err := relDo(s, s.Token, "POST", "/api/v1/check", map[string]any{"tool_name": "bash",
			"tool_args": map[string]any{"command": fmt.Sprintf("make target%d", i)}, "session_id": "load", "wait_seconds": 10})
		if err != nil || st != 200 {
			c.fail("check: %d %.200s %v", st, body, err)
			continue
		}
		var r struct {
			Decision string `json:"decision"`
			Approval struct {
				ID string `json:"id"`
			} `json:"approval"`
		}
		if json.Unmarshal(body, &r) != nil || r.Decision != "deny" || r.Approval.ID == "" {
			c.fail("check answered %s, want deny after a websocket answer", body)
			continue
		}
		ids[r.Approval.ID] = true
		c.checks.Add(1)
	}
}

// TestLoadMixedWorkload: evaluations, policy edits and (once the routes
// exist) approvals answered over websocket, for 10 s (2 m in soak mode):
// no error responses, no goroutine or memory growth between a warm-up and
// the end of the run.
func TestLoadMixedWorkload(t *testing.T) {
	// The server's default collector target (400) lets the heap reach five
	// times the live heap, so RSS says little about leaks; this run collects
	// at Go's default, so that RSS follows what is really kept.
	s := StartServer(t, ServerOptions{ConfigYAML: loadConfig, Args: []string{"--gc-percent", "100"}})
	withApprovals := routeMounted(s, "POST", "/api/v1/check", map[string]any{"tool_name": "custom"}) &&
		routeMounted(s, "GET", "/ws", nil)
	if !withApprovals {
		t.Log("POST /api/v1/check or /ws is not mounted yet: the run has no approvals")
	}
	duration := bySoak(10*time.Second, 2*time.Minute)
	warm := duration / 5
	var c loadCounters
	stop := make(chan struct{})
	wg := runLoad(t, s, stop, &c, withApprovals)
	time.Sleep(warm)
	rss0 := serverRSS(t, s)
	g0, haveG := metricValue(s, "go_goroutines")
	time.Sleep(duration - warm)
	close(stop)
	wg.Wait()
	runtime.Gosched()
	time.Sleep(500 * time.Millisecond) // let finished requests' goroutines end
	rss1 := serverRSS(t, s)
	g1, _ := metricValue(s, "go_goroutines")
	t.Logf("%v: %d evaluations, %d edits, %d checks (%d approvals answered), %d errors; RSS %d -> %d KiB; goroutines %v -> %v",
		duration, c.evals.Load(), c.edits.Load(), c.checks.Load(), c.answered.Load(), c.errors.Load(), rss0, rss1, g0, g1)
	if c.errors.Load() > 0 {
		t.Errorf("%d errors, first: %v", c.errors.Load(), c.firstErrors)
	}
	if c.evals.Load() == 0 || c.edits.Load() == 0 {
		t.Errorf("the workload did not run")
	}
	if rss1 > rss0+max(rss0/2, 32<<10) {
		t.Errorf("RSS grew from %d to %d KiB", rss0, rss1)
	}
	if haveG && g1 > g0+10 {
		t.Errorf("goroutines grew from %v to %v", g0, g1)
	}
	if !haveG {
		t.Errorf("no go_goroutines in /metrics")
	}
}
