package approval

import (
	"testing"
	"time"
)

func TestWebhookBackoffBounded(t *testing.T) {
	base, most := DefaultWebhookBaseDelay, DefaultWebhookMaxDelay
	tests := []struct {
		note   string
		retry  int
		jitter float64
		lo, hi time.Duration
	}{
		{"first retry, least jitter", 1, 0, 500 * time.Millisecond, 500 * time.Millisecond},
		{"first retry, most jitter", 1, 0.999999, 500 * time.Millisecond, time.Second},
		{"second retry doubles", 2, 0, time.Second, time.Second},
		{"fourth retry", 4, 0.999999, 4 * time.Second, 8 * time.Second},
		{"capped at MaxDelay", 5, 0.999999, 4 * time.Second, most},
		{"huge retry number stays capped", 200, 0.999999, 4 * time.Second, most},
	}
	for _, tc := range tests {
		got := backoff(tc.retry, base, most, func() float64 { return tc.jitter })
		if got < tc.lo || got > tc.hi {
			t.Errorf("%s: backoff(%d) = %v, want within [%v, %v]", tc.note, tc.retry, got, tc.lo, tc.hi)
		}
	}
}

// TestWebhookDefaultsEndWithinAMinute adds up the worst case of one
// notification with the defaults: every try times out and every wait takes
// its longest.
func TestWebhookDefaultsEndWithinAMinute(t *testing.T) {
	worst := time.Duration(DefaultWebhookAttempts) * DefaultWebhookTimeout
	for n := 1; n < DefaultWebhookAttempts; n++ {
		worst += backoff(n, DefaultWebhookBaseDelay, DefaultWebhookMaxDelay, func() float64 { return 0.999999 })
	}
	if worst > time.Minute {
		t.Errorf("worst case of one notification: got %v, want at most 1m", worst)
	}
}

func TestSlackEscaping(t *testing.T) {
	tests := []struct{ note, in, code, text string }{
		{"plain", "ls -la", "ls -la", "ls -la"},
		{"mrkdwn controls escaped", "a<b>&c", "a&lt;b&gt;&amp;c", "a&lt;b&gt;&amp;c"},
		{"backtick cannot end a code span", "echo `id`", "echo 'id'", "echo `id`"},
		{"a link cannot be injected", "<https://evil|click>", "&lt;https://evil|click&gt;", "&lt;https://evil|click&gt;"},
	}
	for _, tc := range tests {
		if got := slackCode(tc.in); got != tc.code {
			t.Errorf("%s: slackCode(%q) = %q, want %q", tc.note, tc.in, got, tc.code)
		}
		if got := slackEscape(tc.in); got != tc.text {
			t.Errorf("%s: slackEscape(%q) = %q, want %q", tc.note, tc.in, got, tc.text)
		}
	}
}
