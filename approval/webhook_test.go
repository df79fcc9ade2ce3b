package approval_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/redact"
)

const testSecret = "s3cret-for-tests"

// receiver is an httptest webhook receiver that records each post and
// answers with the next status of its script (200 once the script is used).
type receiver struct {
	mu       sync.Mutex
	posts    []post
	statuses []int
	hang     chan struct{} // when set, every request waits for it to close
	got      chan struct{} // one value per request received
	srv      *httptest.Server
}

type post struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	t.Helper()
	rc := &receiver{statuses: statuses, got: make(chan struct{}, 100)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.posts = append(rc.posts, post{header: r.Header.Clone(), body: body})
	status := http.StatusOK
	if len(rc.statuses) > 0 {
		status, rc.statuses = rc.statuses[0], rc.statuses[1:]
	}
	hang := rc.hang
	rc.mu.Unlock()
	rc.got <- struct{}{}
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}
	w.WriteHeader(status)
}

func (rc *receiver) received() []post {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]post(nil), rc.posts...)
}

// awaitPost waits for the receiver's next request.
func (rc *receiver) awaitPost(t *testing.T) {
	t.Helper()
	select {
	case <-rc.got:
	case <-time.After(10 * time.Second):
		t.Fatal("the receiver got no request within 10s")
	}
}

// logBuffer is a log destination safe to read while workers write.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fastOptions retry quickly, so the tests take milliseconds.
func fastOptions(urls ...string) approval.WebhookOptions {
	return approval.WebhookOptions{
		URLs: urls, Secret: []byte(testSecret), PublicURL: "https://toolgate.example.com/",
		Summarize: redact.Summarize, Redact: redact.Text,
		BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond, Timeout: 2 * time.Second,
	}
}

func newNotifier(t *testing.T, opts approval.WebhookOptions) *approval.Notifier {
	t.Helper()
	n, err := approval.NewNotifier(opts)
	if err != nil {
		t.Fatalf("NewNotifier: %v", err)
	}
	t.Cleanup(n.Close)
	return n
}

func sampleAsk() approval.Approval {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return approval.Approval{
		ID: "ABCDEF234567", Status: approval.StatusPending, CreatedAt: created, ExpiresAt: created.Add(5 * time.Minute),
		Request: approval.Request{ToolName: "bash", ChannelID: "web", SessionID: "sess-1",
			ToolArgs: map[string]any{"command": "curl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz123456' https://x.example"}},
		Asked: approval.Asked{MatchedRule: "tools.bash", Reason: "Approval required for bash (rule: tools.bash)"},
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWebhookPostsSignedRedactedPayload(t *testing.T) {
	rc := newReceiver(t)
	n := newNotifier(t, fastOptions(rc.srv.URL+"/hook"))
	n.Notify(sampleAsk())
	waitFor(t, "one sent notification", func() bool { return n.Sent() == 1 })
	posts := rc.received()
	if len(posts) != 1 {
		t.Fatalf("posts: got %d, want 1", len(posts))
	}
	p := posts[0]
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write(p.body)
	if got, want := p.header.Get(approval.SignatureHeader), "sha256="+hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Errorf("signature: got %q, want %q", got, want)
	}
	if got := p.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("content type: got %q, want application/json", got)
	}
	var body approval.WebhookPayload
	if err := json.Unmarshal(p.body, &body); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, p.body)
	}
	a := body.Approval
	if body.Event != "approval.requested" || a.ID != "ABCDEF234567" || a.ToolName != "bash" || a.SessionID != "sess-1" ||
		a.ChannelID != "web" || a.MatchedRule != "tools.bash" || a.Reason == "" || !a.ExpiresAt.Equal(sampleAsk().ExpiresAt) {
		t.Errorf("payload: got %+v", body)
	}
	if got, want := body.URL, "https://toolgate.example.com/approvals#ABCDEF234567"; got != want {
		t.Errorf("link: got %q, want %q", got, want)
	}
	if strings.Contains(string(p.body), "ghp_abcdef") || !strings.Contains(a.Summary, redact.Redacted) {
		t.Errorf("summary must be redacted as the decision log does: got %q", a.Summary)
	}
	if strings.Contains(string(p.body), "tool_args") {
		t.Errorf("the body must not carry the whole arguments: %s", p.body)
	}
}

func TestWebhookRetriesServerErrors(t *testing.T) {
	tests := []struct {
		note       string
		statuses   []int
		attempts   int
		wantPosts  int
		wantSent   uint64
		wantFailed uint64
	}{
		{"500 then 503 then ok", []int{500, 503, 200}, 5, 3, 1, 0},
		{"429 is retried", []int{429, 200}, 5, 2, 1, 0},
		{"always 500: gives up after the attempts", []int{500, 500, 500, 500, 500}, 3, 3, 0, 1},
		{"400 is not retried", []int{400}, 5, 1, 0, 1},
		{"a redirect is not followed", []int{307}, 5, 1, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.note, func(t *testing.T) {
			rc := newReceiver(t, tc.statuses...)
			opts := fastOptions(rc.srv.URL)
			opts.Attempts = tc.attempts
			n := newNotifier(t, opts)
			n.Notify(sampleAsk())
			waitFor(t, "the notification to end", func() bool { return n.Sent()+n.Failed() == 1 })
			if got := len(rc.received()); got != tc.wantPosts {
				t.Errorf("posts: got %d, want %d", got, tc.wantPosts)
			}
			if n.Sent() != tc.wantSent || n.Failed() != tc.wantFailed || n.Dropped() != 0 {
				t.Errorf("sent/failed/dropped: got %d/%d/%d, want %d/%d/0", n.Sent(), n.Failed(), n.Dropped(), tc.wantSent, tc.wantFailed)
			}
		})
	}
}

func TestWebhookQueueFullDropsAndCounts(t *testing.T) {
	rc := newReceiver(t)
	rc.hang = make(chan struct{})
	var logs logBuffer
	opts := fastOptions(rc.srv.URL)
	opts.QueueSize = 1
	opts.Attempts = 1
	opts.Timeout = time.Minute
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	n := newNotifier(t, opts)

	n.Notify(sampleAsk()) // taken by the worker, which hangs on the receiver
	rc.awaitPost(t)
	for range 4 { // one fits the queue, three are dropped
		n.Notify(sampleAsk())
	}
	if got := n.Dropped(); got != 3 {
		t.Errorf("dropped: got %d, want 3", got)
	}
	if got := strings.Count(logs.String(), "queue full"); got != 1 {
		t.Errorf("drop log lines: got %d, want 1 (at most one a second); log: %s", got, logs.String())
	}
	close(rc.hang)
	waitFor(t, "the queued notification", func() bool { return n.Sent() == 2 })
}

func TestWebhookCloseAbandonsHangingReceiver(t *testing.T) {
	rc := newReceiver(t)
	rc.hang = make(chan struct{})
	defer close(rc.hang)
	opts := fastOptions(rc.srv.URL)
	opts.Timeout = time.Hour
	n, err := approval.NewNotifier(opts)
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(sampleAsk())
	rc.awaitPost(t)
	n.Notify(sampleAsk()) // queued behind the hanging one
	closed := make(chan struct{})
	go func() { n.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while the receiver hung")
	}
	if got := n.Dropped(); got != 2 {
		t.Errorf("dropped at close: got %d, want 2 (the one in flight and the queued one)", got)
	}
	n.Notify(sampleAsk()) // after Close: dropped, no panic
	if got := n.Dropped(); got != 3 {
		t.Errorf("dropped after close: got %d, want 3", got)
	}
}

// slackTransport sends every request to the test server instead of its
// host, so that a hooks.slack.com URL reaches the receiver.
type slackTransport struct{ target *url.URL }

func (s slackTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = s.target.Scheme, s.target.Host
	return http.DefaultTransport.RoundTrip(r)
}

func TestWebhookSlackBody(t *testing.T) {
	rc := newReceiver(t)
	target, _ := url.Parse(rc.srv.URL)
	var logs logBuffer
	opts := fastOptions("https://hooks.slack.com/services/T000/B000/XXXXSECRETPATH")
	opts.Secret = nil // a Slack webhook needs none
	opts.Client = &http.Client{Transport: slackTransport{target}}
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	n := newNotifier(t, opts)
	n.Notify(sampleAsk())
	waitFor(t, "the Slack post", func() bool { return n.Sent() == 1 })
	p := rc.received()[0]
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type     string              `json:"type"`
			Text     *approval.SlackText `json:"text"`
			Elements []map[string]any    `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(p.body, &msg); err != nil {
		t.Fatalf("Slack body is not JSON: %v", err)
	}
	if !strings.Contains(msg.Text, "bash") || strings.Contains(string(p.body), "ghp_abcdef") {
		t.Errorf("text: got %q, want the tool and a redacted summary", msg.Text)
	}
	var types []string
	for _, b := range msg.Blocks {
		types = append(types, b.Type)
	}
	if got, want := strings.Join(types, ","), "section,context,actions"; got != want {
		t.Fatalf("block types: got %s, want %s", got, want)
	}
	if msg.Blocks[0].Text == nil || msg.Blocks[0].Text.Type != "mrkdwn" || !strings.Contains(msg.Blocks[0].Text.Text, "Approval needed") {
		t.Errorf("section: got %+v", msg.Blocks[0].Text)
	}
	button := msg.Blocks[2].Elements[0]
	if button["type"] != "button" || button["url"] != "https://toolgate.example.com/approvals#ABCDEF234567" {
		t.Errorf("button: got %v, want a link button to the ask", button)
	}
	if p.header.Get(approval.SignatureHeader) != "" {
		t.Errorf("no secret, no signature: got %q", p.header.Get(approval.SignatureHeader))
	}
	// A failure's log names the host, never the secret path.
	rc.mu.Lock()
	rc.statuses = []int{400}
	rc.mu.Unlock()
	n.Notify(sampleAsk())
	waitFor(t, "the failed post", func() bool { return n.Failed() == 1 })
	if strings.Contains(logs.String(), "SECRETPATH") || !strings.Contains(logs.String(), "hooks.slack.com") {
		t.Errorf("log must name the host only: %s", logs.String())
	}
}

func TestWebhookConfigErrors(t *testing.T) {
	tests := []struct {
		note string
		edit func(*approval.WebhookOptions)
	}{
		{"no secret for a plain URL", func(o *approval.WebhookOptions) { o.Secret = nil }},
		{"not http", func(o *approval.WebhookOptions) { o.URLs = []string{"ftp://x.example/hook?token=SECRETQ"} }},
		{"relative URL", func(o *approval.WebhookOptions) { o.URLs = []string{"/hook"} }},
		{"public URL with fragment", func(o *approval.WebhookOptions) { o.PublicURL = "https://a.example/#x" }},
		{"public URL not absolute", func(o *approval.WebhookOptions) { o.PublicURL = "toolgate.local" }},
		{"public URL with credentials", func(o *approval.WebhookOptions) { o.PublicURL = "https://admin:SECRETQ@tg.example" }},
		{"no redaction", func(o *approval.WebhookOptions) { o.Redact = nil }},
	}
	for _, tc := range tests {
		opts := fastOptions("https://receiver.example/hook")
		tc.edit(&opts)
		n, err := approval.NewNotifier(opts)
		if err == nil {
			n.Close()
			t.Errorf("%s: NewNotifier succeeded, want an error", tc.note)
			continue
		}
		if !errors.Is(err, approval.ErrWebhookConfig) {
			t.Errorf("%s: error %v does not wrap ErrWebhookConfig", tc.note, err)
		}
		if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), "SECRETQ") {
			t.Errorf("%s: error reveals a secret: %v", tc.note, err)
		}
	}
}

func TestNotifierFollowsManager(t *testing.T) {
	rc := newReceiver(t)
	m := approval.New(approval.Options{Timeout: time.Minute})
	n := newNotifier(t, fastOptions(rc.srv.URL))
	n.Follow(m)
	a := mustCreate(t, m, bashReq("make deploy"), "s1")
	if _, joined, err := m.Create(context.Background(), bashReq("make deploy"), askDecision(), "s1"); err != nil || !joined {
		t.Fatalf("second identical ask: joined=%v err=%v, want joined", joined, err)
	}
	waitFor(t, "the notification of the ask", func() bool { return n.Sent() == 1 })
	if _, err := m.Decide(context.Background(), a.ID, approval.ChoiceAllowOnce, "tester", ""); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	m.Shutdown()
	n.Close() // returns: Follow ended with the manager
	posts := rc.received()
	if len(posts) != 1 {
		t.Fatalf("posts: got %d, want 1 (a joined ask and an answer are not new asks)", len(posts))
	}
	var body approval.WebhookPayload
	if err := json.Unmarshal(posts[0].body, &body); err != nil || body.Approval.ID != a.ID {
		t.Errorf("payload: got %+v (err %v), want approval %s", body, err, a.ID)
	}
}
