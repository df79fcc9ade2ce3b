package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUnknownAPIRoutesAnswerJSON: an API client that asks for a path or
// method no route has reads the API's JSON error shape, while a page path
// still gets a page.
func TestUnknownAPIRoutesAnswerJSON(t *testing.T) {
	r := startReplica(t, testConfig(t))
	cases := []struct {
		note, method, path string
		status             int
		code               string
	}{
		{note: "unknown path under /api/v1", method: "GET", path: "/api/v1/nothing-here", status: 404, code: "not_found"},
		{note: "unknown path under /api/", method: "POST", path: "/api/v2/evaluate", status: 404, code: "not_found"},
		{note: "known path, wrong method", method: "GET", path: "/api/v1/evaluate", status: 405, code: "method_not_allowed"},
		{note: "rpc with a wrong method", method: "GET", path: "/rpc", status: 405, code: "method_not_allowed"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			status, body := r.do(t, c.method, c.path, nil)
			if status != c.status {
				t.Fatalf("%s %s: status %d, want %d", c.method, c.path, status, c.status)
			}
			e, _ := body["error"].(map[string]any)
			if e == nil || e["code"] != c.code || !strings.Contains(e["message"].(string), c.path) {
				t.Fatalf("%s %s: body %v, want an error with code %q naming the path", c.method, c.path, body, c.code)
			}
		})
	}
	t.Run("a page path still answers a page", func(t *testing.T) {
		resp, err := http.Get(r.srv.URL + "/no-such-page")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 404 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(b), "<") {
			t.Fatalf("status %d, type %q: want an HTML 404 page", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	})
}
