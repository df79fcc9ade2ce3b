package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// TestDecisionAgentFromHeader posts evaluate and batch calls with and
// without X-Toolgate-Agent and reads the agent back from the log and its
// ?agent= filter.
func TestDecisionAgentFromHeader(t *testing.T) {
	ds := newDecisionServer(t, true, decisionlog.Options{})
	post := func(path, agent, body string) (int, string) {
		req, _ := http.NewRequest("POST", ds.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ds.token)
		if agent != "" {
			req.Header.Set(api.AgentHeader, agent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	one := `{"tool_name":"read_file","tool_args":{"path":"a.txt"}}`
	tests := []struct {
		note, path, agent, body string
		status                  int
	}{
		{"no header is rest", "/api/v1/evaluate", "", one, 200},
		{"jiuwenswarm says so", "/api/v1/evaluate", "jiuwenswarm", one, 200},
		{"rest said explicitly", "/api/v1/evaluate", "rest", one, 200},
		{"batch takes the header for every call", "/api/v1/evaluate/batch", "jiuwenswarm", `{"calls":[` + one + `,` + one + `]}`, 200},
		{"a hook agent cannot be claimed over REST", "/api/v1/evaluate", "claude-code", one, 400},
		{"an unknown agent is refused", "/api/v1/evaluate", "evil\tagent", one, 400},
	}
	for _, tc := range tests {
		status, body := post(tc.path, tc.agent, tc.body)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.note, status, tc.status, body)
		}
		if status == 400 && !strings.Contains(body, api.AgentHeader) {
			t.Errorf("%s: the error should name %s: %s", tc.note, api.AgentHeader, body)
		}
	}
	if err := ds.log.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	count := func(query string) (int, int) {
		req, _ := http.NewRequest("GET", ds.url+"/api/v1/decisions"+query, nil)
		req.Header.Set("Authorization", "Bearer "+ds.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var page api.DecisionListResponse
		_ = json.NewDecoder(resp.Body).Decode(&page)
		for _, d := range page.Decisions {
			if q := strings.TrimPrefix(query, "?agent="); q != query && d.Agent != q {
				t.Errorf("%s: decision %d has agent %q", query, d.ID, d.Agent)
			}
		}
		return resp.StatusCode, len(page.Decisions)
	}
	for _, tc := range []struct {
		note, query  string
		status, want int
	}{
		{"all", "", 200, 5},
		{"rest", "?agent=rest", 200, 2},
		{"jiuwenswarm (one evaluate, two batch calls)", "?agent=jiuwenswarm", 200, 3},
		{"a known agent with no calls", "?agent=gemini", 200, 0},
		{"an unknown agent", "?agent=nobody", 400, 0},
	} {
		if status, n := count(tc.query); status != tc.status || n != tc.want {
			t.Errorf("%s: status %d with %d decisions, want %d with %d", tc.note, status, n, tc.status, tc.want)
		}
	}
}
