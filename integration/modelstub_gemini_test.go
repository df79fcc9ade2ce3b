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
	"time"
)

// geminiStub stands in for the Gemini API that Gemini CLI talks to
// (GOOGLE_GEMINI_BASE_URL): the first streamGenerateContent request that
// declares the tool is answered with one functionCall, the request that
// carries its functionResponse with a short text, and any other request
// with a short text. Streams are server-sent events of
// GenerateContentResponse objects (https://ai.google.dev/api/generate-content).
type geminiStub struct {
	srv  *httptest.Server
	tool string
	args map[string]any

	mu      sync.Mutex
	results []string // the functionResponse parts Gemini CLI sent back
	calls   int
	// sent is when the tool call went out, took how long the agent then
	// took to send its result back: toolgate's hook plus the agent's own work.
	sent time.Time
	took time.Duration
}

func newGeminiStub(t *testing.T, tool string, args map[string]any) *geminiStub {
	s := &geminiStub{tool: tool, args: args}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *geminiStub) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, ":") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		Contents []struct {
			Parts []struct {
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	offers := false
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			offers = offers || d.Name == s.tool
		}
	}
	result, hasResult := "", false
	if n := len(req.Contents); n > 0 {
		for _, p := range req.Contents[n-1].Parts {
			if len(p.FunctionResponse) > 0 {
				result, hasResult = string(p.FunctionResponse), true
			}
		}
	}
	s.mu.Lock()
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
	part := map[string]any{"text": "done"}
	if answerTool {
		part = map[string]any{"functionCall": map[string]any{"name": s.tool, "args": s.args}}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-stub",
	}
	data, _ := json.Marshal(resp)
	if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", data)
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
func (s *geminiStub) turnTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.took
}

func (s *geminiStub) toolResults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.results...)
}
