package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// responsesStub stands in for the OpenAI Responses API that Codex talks to
// (a model provider with wire_api = "responses" in its config.toml): the
// first request that offers the tool is answered with one function_call,
// the request carrying its function_call_output with a short message.
// Answers are the server-sent events Codex reads
// (https://platform.openai.com/docs/api-reference/responses-streaming).
type responsesStub struct {
	srv  *httptest.Server
	tool string
	args map[string]any
	// namespace, if set, is the namespace tool that holds tool: Codex
	// offers an MCP server's tools as one, named mcp__SERVER.
	namespace string
	offered   bool // a request offered the tool

	mu      sync.Mutex
	results []string // the function_call_output texts Codex sent back
	calls   int
	// sent is when the tool call went out, took how long the agent then
	// took to send its result back: toolgate's hook plus the agent's own work.
	sent time.Time
	took time.Duration
}

func newResponsesStub(t *testing.T, tool string, args map[string]any) *responsesStub {
	s := &responsesStub{tool: tool, args: args}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *responsesStub) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Tools []struct {
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	offers := false
	for _, t := range req.Tools {
		offers = offers || (s.namespace == "" && t.Name == s.tool)
		for _, inner := range t.Tools {
			offers = offers || (s.namespace != "" && t.Name == s.namespace && inner.Name == s.tool)
		}
	}
	result, hasResult := "", false
	for _, in := range req.Input {
		if in.Type == "function_call_output" {
			result, hasResult = string(in.Output), true
		}
	}
	s.mu.Lock()
	s.offered = s.offered || offers
	answerTool := offers && !hasResult && s.calls == 0
	if answerTool {
		s.calls++
	}
	if hasResult {
		s.results = append(s.results, result)
		if s.took == 0 && !s.sent.IsZero() {
			s.took = time.Since(s.sent)
		}
	}
	s.mu.Unlock()
	item := map[string]any{"type": "message", "role": "assistant", "id": "msg_stub",
		"content": []any{map[string]any{"type": "output_text", "text": "done"}}}
	if answerTool {
		args, _ := json.Marshal(s.args)
		item = map[string]any{"type": "function_call", "id": "fc_stub", "name": s.tool, "arguments": string(args), "call_id": "call_stub_1"}
		if s.namespace != "" {
			item["namespace"] = s.namespace
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	events := []map[string]any{
		{"type": "response.created", "response": map[string]any{"id": "resp_stub"}},
		{"type": "response.output_item.done", "item": item},
		{"type": "response.completed", "response": map[string]any{"id": "resp_stub",
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}},
	}
	for _, e := range events {
		data, _ := json.Marshal(e)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e["type"], data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if answerTool {
		s.mu.Lock()
		s.sent = time.Now()
		s.mu.Unlock()
	}
}

// turnTime is how long the agent took from the tool call to its result, 0
// if it sent none.
func (s *responsesStub) turnTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.took
}

// wasOffered reports whether any request offered the tool.
func (s *responsesStub) wasOffered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offered
}

func (s *responsesStub) toolResults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.results...)
}
