package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Sizes of the websocket load run against the real binary.
const (
	wsLoadClients = 1000
	wsLoadAsks    = 50
)

// TestApprovalsWSLoad measures, against the real binary, the time from an
// ask's creation over REST (just before POST /api/v1/check) to its
// approval.requested message being read by each of 1,000 connected
// bearer-token websocket clients. 50 asks one after another; each is denied
// and its approval.resolved seen by every client before the next, so this
// measures latency, not backlog. Opt-in:
//
//	TOOLGATE_WS_LOAD=1 go test ./integration/ -run TestApprovalsWSLoad -v -count=1
func TestApprovalsWSLoad(t *testing.T) {
	if os.Getenv("TOOLGATE_WS_LOAD") != "1" {
		t.Skip("set TOOLGATE_WS_LOAD=1 to run the 1,000-client websocket load test")
	}
	raiseFileLimit(t, 2*wsLoadClients+512) // the server inherits it
	s := StartServer(t, ServerOptions{})

	type arrival struct {
		id       string
		resolved bool
		at       time.Time
	}
	arrivals := make(chan arrival, wsLoadClients*4)
	var connected, dropped atomic.Int64
	var wg sync.WaitGroup
	dialStart := time.Now()
	conns := make(chan error, wsLoadClients)
	sem := make(chan struct{}, 32)
	for i := 0; i < wsLoadClients; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, resp, err := dialWS(s, s.Token, s.URL)
			<-sem
			if err != nil {
				conns <- fmt.Errorf("dial: %s", wsStatus(resp, err))
				return
			}
			t.Cleanup(func() { conn.Close() })
			conns <- nil
			connected.Add(1)
			for {
				_, data, err := conn.ReadMessage()
				at := time.Now()
				if err != nil {
					dropped.Add(1)
					return
				}
				var m struct {
					Type     string `json:"type"`
					Approval struct {
						ID string `json:"id"`
					} `json:"approval"`
				}
				if json.Unmarshal(data, &m) != nil {
					continue
				}
				switch m.Type {
				case "approval.requested":
					arrivals <- arrival{id: m.Approval.ID, at: at}
				case "approval.resolved":
					arrivals <- arrival{id: m.Approval.ID, resolved: true, at: at}
				}
			}
		}()
	}
	for i := 0; i < wsLoadClients; i++ {
		if err := <-conns; err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	WaitFor(t, 30*time.Second, "the hub to count every client", func() bool {
		n, ok := metricValue(s, "toolgate_websocket_clients")
		return ok && n == wsLoadClients
	})
	t.Logf("%d clients connected in %v; server RSS %d KiB", connected.Load(), time.Since(dialStart).Round(time.Millisecond), serverRSS(t, s))

	var perDelivery, perAsk []time.Duration
	for i := 0; i < wsLoadAsks; i++ {
		start := time.Now()
		got := answered(t, checkAsync(s, s.Token, askBody(fmt.Sprintf("make load%d", i), "", "load", 0)), 20*time.Second)
		if got.Approval == nil {
			t.Fatalf("ask %d: %+v, want pending", i, got)
		}
		id := got.Approval.ID
		var last time.Duration
		collect := func(resolved bool) {
			deadline := time.After(30 * time.Second)
			for n := 0; n < wsLoadClients; {
				select {
				case a := <-arrivals:
					if a.id != id || a.resolved != resolved {
						t.Fatalf("ask %d: unexpected event for %s (resolved %v)", i, a.id, a.resolved)
					}
					n++
					if !resolved {
						d := a.at.Sub(start)
						perDelivery = append(perDelivery, d)
						last = max(last, d)
					}
				case <-deadline:
					t.Fatalf("ask %d: only %d of %d clients got it (resolved %v) in 30 s; %d dropped", i, n, wsLoadClients, resolved, dropped.Load())
				}
			}
		}
		collect(false)
		perAsk = append(perAsk, last)
		if st, body, err := relDo(s, s.Token, "POST", "/api/v1/approvals/"+id+"/decision", map[string]any{"choice": "deny"}); err != nil || st != 200 {
			t.Fatalf("deny ask %d: %d %s %v", i, st, body, err)
		}
		collect(true)
	}
	if n := dropped.Load(); n != 0 {
		t.Errorf("%d clients were dropped during the run", n)
	}
	t.Logf("machine: %d CPUs (GOMAXPROCS %d), %s; server RSS after %d KiB", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), serverRSS(t, s))
	t.Logf("per delivery (%d): p50 %v p99 %v max %v", len(perDelivery), pct(perDelivery, 50), pct(perDelivery, 99), pct(perDelivery, 100))
	t.Logf("per ask, until all %d clients have it (%d): p50 %v p99 %v max %v", wsLoadClients, len(perAsk), pct(perAsk, 50), pct(perAsk, 99), pct(perAsk, 100))
}

// raiseFileLimit lifts RLIMIT_NOFILE to at least n (up to the hard limit).
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	lim.Cur = min(n, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("raise RLIMIT_NOFILE to %d: %v", lim.Cur, err)
	}
	if lim.Cur < n {
		t.Fatalf("RLIMIT_NOFILE hard limit %d is below the %d this test needs", lim.Max, n)
	}
}

// pct is the p-th percentile (nearest rank) of ds, rounded for reading.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	i = min(max(i, 1), len(s))
	return s[i-1].Round(10 * time.Microsecond)
}
