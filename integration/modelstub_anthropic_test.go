package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// anthropicStub stands in for the Anthropic Messages API that Claude Code
// talks to (ANTHROPIC_BASE_URL): a request of the agent's main loop (one
// that offers the tool) is answered with one tool_use call, the request that
// carries that call's tool_result with a short text, and any other request
// (a title, a summary) with a short text. Streaming requests get the
// server-sent events of https://docs.anthropic.com/en/api/messages-streaming.
type anthropicStub struct {
	srv  *httptest.Server
	tool string
	args map[string]any
	// more are the calls after the first, each asked for once the
	// previous call's tool_result has come back (newAnthropicStubSeq).
	more []map[string]any

	mu      sync.Mutex
	results []string // the tool_result texts Claude Code sent back
	calls   int      // how many tool_use answers were sent
}

// newAnthropicStub starts a stub whose first main-loop answer calls tool
// with args.
func newAnthropicStub(t *testing.T, tool string, args map[string]any) *anthropicStub {
	s := &anthropicStub{tool: tool, args: args}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// newAnthropicStubSeq starts a stub that calls tool with each of calls in
// turn in one session: the next call once the previous one's tool_result
// has come back.
func newAnthropicStubSeq(t *testing.T, tool string, calls ...map[string]any) *anthropicStub {
	s := newAnthropicStub(t, tool, calls[0])
	s.more = calls[1:]
	return s
}

// messagesRequest is what the stub reads of a request.
type messagesRequest struct {
	Stream bool `json:"stream"`
	Tools  []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (s *anthropicStub) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		stubJSON(w, map[string]any{"input_tokens": 10})
		return
	}
	offers := false
	for _, t := range req.Tools {
		offers = offers || t.Name == s.tool
	}
	result, hasResult := lastToolResult(req)
	s.mu.Lock()
	answerTool := offers && (!hasResult && s.calls == 0 || hasResult && s.calls > 0 && s.calls <= len(s.more))
	args := s.args
	if answerTool && s.calls > 0 {
		args = s.more[s.calls-1]
	}
	if answerTool {
		s.calls++
	}
	n := s.calls
	if hasResult {
		s.results = append(s.results, result)
	}
	s.mu.Unlock()
	if answerTool {
		input, _ := json.Marshal(args)
		s.reply(w, req.Stream, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_stub_%d", n), "name": s.tool, "input": map[string]any{}}, string(input), "tool_use")
		return
	}
	s.reply(w, req.Stream, map[string]any{"type": "text", "text": ""}, "done", "end_turn")
}

// lastToolResult is the text of the last message's tool_result, if any.
func lastToolResult(req messagesRequest) (string, bool) {
	if len(req.Messages) == 0 {
		return "", false
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
		IsError bool            `json:"is_error"`
	}
	if json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks) != nil {
		return "", false
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return fmt.Sprintf("error=%v %s", b.IsError, b.Content), true
		}
	}
	return "", false
}

// reply writes one assistant message of one content block: a tool_use
// (whose input arrives as one input_json_delta) or a text.
func (s *anthropicStub) reply(w http.ResponseWriter, stream bool, block map[string]any, delta, stop string) {
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !stream {
		full := block
		if block["type"] == "text" {
			full = map[string]any{"type": "text", "text": delta}
		} else {
			var input map[string]any
			_ = json.Unmarshal([]byte(delta), &input)
			full = map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": input}
		}
		stubJSON(w, map[string]any{"id": "msg_stub", "type": "message", "role": "assistant", "model": "claude-stub",
			"content": []any{full}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	deltaEvent := map[string]any{"type": "text_delta", "text": delta}
	if block["type"] == "tool_use" {
		deltaEvent = map[string]any{"type": "input_json_delta", "partial_json": delta}
	}
	events := []map[string]any{
		{"type": "message_start", "message": map[string]any{"id": "msg_stub", "type": "message", "role": "assistant",
			"model": "claude-stub", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}},
		{"type": "content_block_start", "index": 0, "content_block": block},
		{"type": "content_block_delta", "index": 0, "delta": deltaEvent},
		{"type": "content_block_stop", "index": 0},
		{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}},
		{"type": "message_stop"},
	}
	for _, e := range events {
		data, _ := json.Marshal(e)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e["type"], data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// toolResults is what Claude Code reported of the tool call.
func (s *anthropicStub) toolResults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.results...)
}

func stubJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
