package web_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/web"
)

var wsLoad = flag.Bool("ws.load", false, "run the 1,000-client websocket load test")

// TestWSLoad measures, with 1,000 connected websocket clients, the time from
// an ask's creation to its arrival at every client. It is a measurement,
// not a gate: run it with -ws.load or TOOLGATE_WS_LOAD=1, for example
//
//	go test ./web/ -run TestWSLoad -ws.load -v
func TestWSLoad(t *testing.T) {
	if !*wsLoad && os.Getenv("TOOLGATE_WS_LOAD") != "1" {
		t.Skip("load test: run with -ws.load or TOOLGATE_WS_LOAD=1")
	}
	const clients, asks = 1000, 30
	e := newHubEnv(t, approval.Options{}, web.HubOptions{})
	arrivals := make([]map[string]time.Time, clients)
	var mu sync.Mutex
	var ready, done sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i := range clients {
		arrivals[i] = make(map[string]time.Time, asks)
		ready.Add(1)
		done.Add(1)
		sem <- struct{}{}
		h := http.Header{}
		h.Set("Origin", e.srv.URL)
		h.Set("Cookie", "tg_session=alice-token")
		c, _, err := websocket.DefaultDialer.Dial(e.url, h)
		<-sem
		if err != nil {
			t.Fatalf("client %d: dial: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		go func() {
			defer done.Done()
			got := 0
			for {
				_, data, err := c.ReadMessage()
				at := time.Now()
				if err != nil {
					return
				}
				var m struct {
					Type     string `json:"type"`
					Approval struct {
						ID string `json:"id"`
					} `json:"approval"`
				}
				json.Unmarshal(data, &m)
				switch m.Type {
				case "hello":
					ready.Done()
				case "approval.requested":
					mu.Lock()
					arrivals[i][m.Approval.ID] = at
					mu.Unlock()
					if got++; got == asks {
						return
					}
				}
			}
		}()
	}
	ready.Wait()
	created := make(map[string]time.Time, asks)
	for i := range asks {
		start := time.Now()
		a := hubAsk(t, e.m, fmt.Sprintf("deploy --target prod-%d", i), "web", "")
		created[a.ID] = start
		time.Sleep(50 * time.Millisecond) // one ask at a time: measure latency, not a backlog
	}
	waitDone := make(chan struct{})
	go func() { done.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(30 * time.Second):
		t.Fatal("not every client received every ask within 30s")
	}
	var each, all []time.Duration
	for id, start := range created {
		var last time.Duration
		for i := range clients {
			at, ok := arrivals[i][id]
			if !ok {
				t.Fatalf("client %d never got ask %s", i, id)
			}
			d := at.Sub(start)
			each = append(each, d)
			last = max(last, d)
		}
		all = append(all, last)
	}
	slices.Sort(each)
	slices.Sort(all)
	pct := func(s []time.Duration, p float64) time.Duration { return s[int(p*float64(len(s)-1))] }
	t.Logf("GOMAXPROCS=%d clients=%d asks=%d deliveries=%d", runtime.GOMAXPROCS(0), clients, asks, len(each))
	t.Logf("per delivery (ask created -> one client has it): p50=%v p99=%v max=%v",
		pct(each, 0.50).Round(time.Microsecond), pct(each, 0.99).Round(time.Microsecond), each[len(each)-1].Round(time.Microsecond))
	t.Logf("per ask (ask created -> all %d clients have it): p50=%v p99=%v max=%v",
		clients, pct(all, 0.50).Round(time.Microsecond), pct(all, 0.99).Round(time.Microsecond), all[len(all)-1].Round(time.Microsecond))
	if e.hub.Dropped() != 0 {
		t.Errorf("the hub dropped %d clients under load", e.hub.Dropped())
	}
}
