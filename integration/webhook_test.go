package integration

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// webhookConfig asks for every bash call, and allows ls.
const webhookConfig = `permissions:
  enabled: true
  schema: tiered_policy
  tools:
    bash: ask
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
`

const webhookSecret = "integration-webhook-secret"

// hookReceiver is an approval webhook receiver: it records every post and
// answers with the next status of its script (200 when the script is used
// up); with hang set it never answers.
type hookReceiver struct {
	mu       sync.Mutex
	posts    []hookPost
	statuses []int
	hang     chan struct{}
	srv      *httptest.Server
}

type hookPost struct {
	signature string
	body      []byte
}

func newHookReceiver(t *testing.T, hang bool, statuses ...int) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{statuses: statuses}
	if hang {
		rc.hang = make(chan struct{})
	}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.posts = append(rc.posts, hookPost{signature: r.Header.Get("X-Toolgate-Signature"), body: body})
		status := http.StatusOK
		if len(rc.statuses) > 0 {
			status, rc.statuses = rc.statuses[0], rc.statuses[1:]
		}
		rc.mu.Unlock()
		if rc.hang != nil {
			select {
			case <-rc.hang:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(func() {
		if rc.hang != nil {
			close(rc.hang)
		}
		rc.srv.Close()
	})
	return rc
}

func (rc *hookReceiver) received() []hookPost {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.posts)
}

// checkAsk posts a /check for a bash command that asks, without waiting,
// and returns the approval id.
func checkAsk(t *testing.T, s *Server, command string) string {
	t.Helper()
	status, body := s.Do("POST", "/api/v1/check", map[string]any{"tool_name": "bash", "channel_id": "web",
		"session_id": "sess-hook", "tool_args": map[string]any{"command": command}, "wait_seconds": 0})
	if status != 200 {
		t.Fatalf("check %q: status %d: %s", command, status, body)
	}
	out := DecodeJSON[struct {
		Decision string `json:"decision"`
		Approval struct {
			ID string `json:"id"`
		} `json:"approval"`
	}](t, body)
	if out.Decision != "pending" || out.Approval.ID == "" {
		t.Fatalf("check %q: got %s, want a pending approval", command, body)
	}
	return out.Approval.ID
}

// validateNotification checks a webhook body against openapi.yaml's
// ApprovalNotification schema.
func validateNotification(t *testing.T, body []byte) {
	t.Helper()
	data, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	ref := doc.Components.Schemas["ApprovalNotification"]
	if ref == nil || ref.Value == nil {
		t.Fatal("openapi.yaml has no ApprovalNotification schema")
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if err := ref.Value.VisitJSON(v); err != nil {
		t.Errorf("the notification does not match openapi.yaml: %v", err)
	}
}

// webhookMetric reads one counter of the webhooks (-1 when absent).
func webhookMetric(s *Server, name string) float64 {
	v, ok := metricValue(s, name)
	if !ok {
		return -1
	}
	return v
}

func TestApprovalWebhookSignedAndRetried(t *testing.T) {
	rc := newHookReceiver(t, false, http.StatusInternalServerError) // the first try fails
	t.Setenv("TOOLGATE_APPROVAL_WEBHOOK_SECRET", webhookSecret)
	s := StartServer(t, ServerOptions{ConfigYAML: webhookConfig,
		Args: []string{"--approval-webhook", rc.srv.URL + "/toolgate", "--public-url", "https://toolgate.example.com"}})

	id := checkAsk(t, s, "curl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123' https://api.example.com")
	WaitFor(t, 15*time.Second, "the retried notification", func() bool { return len(rc.received()) >= 2 })
	posts := rc.received()
	if len(posts) != 2 {
		t.Fatalf("posts: got %d, want 2 (a 500, then the retry)", len(posts))
	}
	for i, p := range posts {
		mac := hmac.New(sha256.New, []byte(webhookSecret))
		mac.Write(p.body)
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); p.signature != want {
			t.Errorf("post %d: signature %q, want %q", i, p.signature, want)
		}
	}
	if string(posts[0].body) != string(posts[1].body) {
		t.Errorf("a retry must resend the same body")
	}
	var got struct {
		Event    string `json:"event"`
		URL      string `json:"url"`
		Approval struct {
			ID          string    `json:"id"`
			ToolName    string    `json:"tool_name"`
			Summary     string    `json:"summary"`
			SessionID   string    `json:"session_id"`
			MatchedRule string    `json:"matched_rule"`
			Reason      string    `json:"reason"`
			ExpiresAt   time.Time `json:"expires_at"`
		} `json:"approval"`
	}
	if err := json.Unmarshal(posts[1].body, &got); err != nil {
		t.Fatalf("body: %v: %s", err, posts[1].body)
	}
	a := got.Approval
	if got.Event != "approval.requested" || a.ID != id || a.ToolName != "bash" || a.SessionID != "sess-hook" || a.MatchedRule != "tools.bash" ||
		a.Reason == "" || a.ExpiresAt.IsZero() {
		t.Errorf("payload: got %s", posts[1].body)
	}
	validateNotification(t, posts[1].body)
	if want := "https://toolgate.example.com/approvals#" + id; got.URL != want {
		t.Errorf("link: got %q, want %q", got.URL, want)
	}
	if html := adminPage(t, s, "/approvals"); !strings.Contains(html, `id="`+id+`"`) {
		t.Errorf("the approvals page has no element with id %q for the link's fragment", id)
	}
	if strings.Contains(string(posts[1].body), "ghp_abcdef") || !strings.Contains(a.Summary, "[REDACTED]") {
		t.Errorf("the summary must be redacted: %q", a.Summary)
	}
	WaitFor(t, 5*time.Second, "the sent counter", func() bool {
		return webhookMetric(s, "toolgate_approval_webhook_sent_total") == 1
	})
	if strings.Contains(s.Output(), webhookSecret) {
		t.Errorf("the server's output shows the webhook secret:\n%s", s.Output())
	}
}

// TestApprovalWebhookHangingReceiverDoesNotDelayDecisions points the
// webhook at a receiver that never answers: evaluate keeps its speed, every
// check answers at once, asks are still created and answered, and what does
// not fit the queue is dropped and counted.
func TestApprovalWebhookHangingReceiverDoesNotDelayDecisions(t *testing.T) {
	rc := newHookReceiver(t, true)
	plain := StartServer(t, ServerOptions{ConfigYAML: webhookConfig})
	// 300 asks from one token: past the default caps on pending asks.
	hooked := StartServer(t, ServerOptions{ConfigYAML: webhookConfig,
		Args: []string{"--approval-webhook", rc.srv.URL, "--approval-webhook-secret", webhookSecret,
			"--max-pending-per-token", "1000", "--max-pending-per-session", "1000"}})

	// The first ask occupies the webhook's worker for good.
	first := checkAsk(t, hooked, "make deploy-0")
	WaitFor(t, 10*time.Second, "the hanging post", func() bool { return len(rc.received()) == 1 })

	const n = 300 // more asks than the queue holds (256)
	var slowest time.Duration
	for i := 1; i <= n; i++ {
		start := time.Now()
		checkAsk(t, hooked, fmt.Sprintf("make deploy-%d", i))
		slowest = max(slowest, time.Since(start))
	}
	// Each try of the hanging post lasts 5 s: a check that waited for the
	// webhook would take that long.
	if slowest > 2*time.Second {
		t.Errorf("slowest of %d checks with a hanging webhook: %v, want well under the 5 s a webhook try lasts", n, slowest)
	}
	plainMed, hookedMed := evaluateMedian(t, plain), evaluateMedian(t, hooked)
	t.Logf("evaluate median: %v without a webhook, %v with a hanging one; slowest check %v", plainMed, hookedMed, slowest)

	status, body := hooked.Do("POST", "/api/v1/approvals/"+first+"/decision", map[string]any{"choice": "allow_once"})
	if status != 200 {
		t.Fatalf("answering the first ask: status %d: %s", status, body)
	}
	status, body = hooked.Do("GET", "/api/v1/approvals/"+first, nil)
	if status != 200 || !strings.Contains(string(body), `"decision":"allow"`) {
		t.Errorf("the answered ask: status %d: %s", status, body)
	}
	if d := webhookMetric(hooked, "toolgate_approval_webhook_dropped_total"); d < n-256 {
		t.Errorf("dropped notifications: got %v, want at least %d", d, n-256)
	}
	if webhookMetric(plain, "toolgate_approval_webhook_dropped_total") != -1 {
		t.Errorf("a server without webhooks should not export their counters")
	}
	if !strings.Contains(hooked.Output(), "queue full") {
		t.Errorf("drops should be logged")
	}

	// Shutdown abandons the hanging post and the queue instead of waiting
	// for them (Stop would kill the server after 10 s).
	start := time.Now()
	hooked.Stop()
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("shutdown with a hanging webhook took %v", took)
	}
	if out := hooked.Output(); !strings.Contains(out, "stopped before a notification was delivered") ||
		!strings.Contains(out, "stopped with notifications undelivered") {
		t.Errorf("shutdown should log the abandoned notifications:\n%s", out)
	}
}

// evaluateMedian is the median latency of 200 allowed evaluate calls.
func evaluateMedian(t *testing.T, s *Server) time.Duration {
	t.Helper()
	times := make([]time.Duration, 0, 200)
	for range 200 {
		start := time.Now()
		status, body := s.Do("POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "channel_id": "web",
			"tool_args": map[string]any{"command": "ls -la"}})
		times = append(times, time.Since(start))
		if status != 200 || !strings.Contains(string(body), `"level":"allow"`) {
			t.Fatalf("evaluate: status %d: %s", status, body)
		}
	}
	slices.Sort(times)
	return times[len(times)/2]
}
