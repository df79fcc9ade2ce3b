package approval

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// WebhookPayload is the JSON body posted to an approval webhook for a new
// ask. The signature header is the HMAC of exactly these bytes.
type WebhookPayload struct {
	// Event is "approval.requested".
	Event    string          `json:"event"`
	Approval WebhookApproval `json:"approval"`
	// URL opens the ask in the admin pages: <public URL>/approvals#<id>.
	URL string `json:"url"`
}

// WebhookApproval is an ask as a webhook sees it: its arguments only as the
// decision log's redacted summary, never whole.
type WebhookApproval struct {
	ID          string    `json:"id"`
	ToolName    string    `json:"tool_name"`
	Summary     string    `json:"summary"`
	ChannelID   string    `json:"channel_id"`
	SessionID   string    `json:"session_id"`
	MatchedRule string    `json:"matched_rule"`
	Reason      string    `json:"reason"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// SignWebhook is the X-Toolgate-Signature value of a body:
// "sha256=" and the hex HMAC-SHA256 of the body keyed by the secret.
func SignWebhook(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// payload is the notification of an ask, redacted.
func (n *Notifier) payload(a Approval) WebhookPayload {
	return WebhookPayload{
		Event: EventRequested,
		Approval: WebhookApproval{
			ID:          a.ID,
			ToolName:    a.Request.ToolName,
			Summary:     n.opts.Summarize(a.Request.Call()),
			ChannelID:   a.Request.ChannelID,
			SessionID:   a.Request.SessionID,
			MatchedRule: a.Asked.MatchedRule,
			Reason:      n.opts.Redact(a.Asked.Reason),
			CreatedAt:   a.CreatedAt.UTC(),
			ExpiresAt:   a.ExpiresAt.UTC(),
		},
		URL: approvalLink(n.opts.PublicURL, a.ID),
	}
}

// approvalLink is the admin pages' link to an ask.
func approvalLink(base, id string) string {
	return strings.TrimRight(base, "/") + "/approvals#" + id
}

// body is what one target gets: our JSON, or Slack's message for a Slack
// incoming webhook.
func (n *Notifier) body(t *webhookTarget, a Approval) ([]byte, error) {
	p := n.payload(a)
	if t.slack {
		return json.Marshal(slackMessage(p))
	}
	return json.Marshal(p)
}

// SlackMessage is the body of a Slack incoming webhook: text is the
// fallback (notifications, old clients), blocks the message shown.
type SlackMessage struct {
	Text   string       `json:"text"`
	Blocks []SlackBlock `json:"blocks"`
}

// SlackBlock is one Block Kit block: a section (Text), or a context or
// actions block (Elements: SlackText or SlackButton values).
type SlackBlock struct {
	Type     string     `json:"type"`
	Text     *SlackText `json:"text,omitempty"`
	Elements []any      `json:"elements,omitempty"`
}

// SlackText is a Block Kit text object (mrkdwn or plain_text).
type SlackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// SlackButton is a link button of an actions block.
type SlackButton struct {
	Type     string    `json:"type"` // "button"
	Text     SlackText `json:"text"`
	URL      string    `json:"url"`
	ActionID string    `json:"action_id"`
}

// slackReasonMax bounds the reason shown in Slack (a section holds at most
// 3000 characters).
const slackReasonMax = 500

// slackMessage is the Slack form of a notification: who waits for what,
// why, and a button that opens the ask.
func slackMessage(p WebhookPayload) SlackMessage {
	a := p.Approval
	text := fmt.Sprintf("toolgate: %s waits for approval: %s", a.ToolName, a.Summary)
	section := fmt.Sprintf("*Approval needed*: `%s`\n```%s```\n*Reason*: %s",
		slackCode(a.ToolName), slackCode(a.Summary), slackEscape(cut(a.Reason, slackReasonMax)))
	context := fmt.Sprintf("rule `%s` · session `%s` · expires %s",
		slackCode(a.MatchedRule), slackCode(a.SessionID), a.ExpiresAt.Format(time.RFC3339))
	return SlackMessage{
		Text: slackEscape(text),
		Blocks: []SlackBlock{
			{Type: "section", Text: &SlackText{Type: "mrkdwn", Text: section}},
			{Type: "context", Elements: []any{SlackText{Type: "mrkdwn", Text: context}}},
			{Type: "actions", Elements: []any{SlackButton{Type: "button", ActionID: "open",
				Text: SlackText{Type: "plain_text", Text: "Open in toolgate"}, URL: p.URL}}},
		},
	}
}

// slackEscape escapes the three characters Slack's mrkdwn reserves.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// slackCode is text for inside a code span: escaped, and without backticks,
// which would end the span.
func slackCode(s string) string {
	return strings.ReplaceAll(slackEscape(s), "`", "'")
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
