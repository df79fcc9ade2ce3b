package mcpgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// message is what the gate reads of a JSON-RPC message. Its members are
// read by their exact names, as the server's JSON parser reads them (Go's
// struct decoding would also take "Method" for "method", and a message
// with both could be a call to the server and none to the gate); of a
// name written twice, the last counts, as in JavaScript.
type message struct {
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage
}

// errBatch marks a JSON array: a batch of messages.
var errBatch = errors.New("a batch")

// readMessage reads one line as a JSON-RPC message.
func readMessage(line []byte) (message, error) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return message{}, errBatch
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &members); err != nil {
		return message{}, err
	}
	var m message
	if raw, ok := members["method"]; ok {
		if err := json.Unmarshal(raw, &m.method); err != nil {
			return message{}, fmt.Errorf("method: %w", err)
		}
	}
	if raw, ok := members["id"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		// Compact, so that an answer's id meets its request's however
		// either side spaced it.
		var id bytes.Buffer
		if err := json.Compact(&id, raw); err != nil {
			return message{}, fmt.Errorf("id: %w", err)
		}
		m.id = id.Bytes()
	}
	m.params = members["params"]
	return m, nil
}

// batchHasCall reports whether a batch holds a tools/call, or an element
// the gate cannot read (which might be one).
func batchHasCall(line []byte) bool {
	var items []json.RawMessage
	if json.Unmarshal(line, &items) != nil {
		return true
	}
	for _, it := range items {
		m, err := readMessage(it)
		if err != nil || m.method == "tools/call" {
			return true
		}
	}
	return false
}

// callOf reads a tools/call's tool name and arguments ("{}" when absent).
func callOf(params json.RawMessage) (string, json.RawMessage, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(params, &members); err != nil {
		return "", nil, fmt.Errorf("tools/call params must be an object: %w", err)
	}
	var name string
	if err := json.Unmarshal(members["name"], &name); err != nil || name == "" {
		return "", nil, errors.New("tools/call needs the tool's name")
	}
	args := members["arguments"]
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return "", nil, errors.New("tools/call arguments must be an object")
	}
	return name, args, nil
}

// cancelledID reads the requestId of notifications/cancelled.
func cancelledID(params json.RawMessage) (json.RawMessage, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(params, &members) != nil {
		return nil, false
	}
	raw, ok := members["requestId"]
	var id bytes.Buffer
	if !ok || json.Compact(&id, raw) != nil {
		return nil, false
	}
	return id.Bytes(), true
}

// The answers the gate writes itself. Their fields are in encoding/json's
// order for a map (keys sorted), so the bytes are those the map literals
// they replace wrote.
type (
	// resultAnswer is a JSON-RPC result answer of a tools/call.
	resultAnswer struct {
		ID      json.RawMessage `json:"id"`
		JSONRPC string          `json:"jsonrpc"`
		Result  toolResult      `json:"result"`
	}
	// toolResult is an MCP tools/call result.
	toolResult struct {
		Content []textContent `json:"content"`
		IsError bool          `json:"isError"`
	}
	// textContent is an MCP text content block.
	textContent struct {
		Text string `json:"text"`
		Type string `json:"type"`
	}
	// errorAnswer is a JSON-RPC error answer; a nil ID is written null.
	errorAnswer struct {
		Error   rpcErr          `json:"error"`
		ID      json.RawMessage `json:"id"`
		JSONRPC string          `json:"jsonrpc"`
	}
	rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
)

// refusal is the answer to a refused call: a tool result that says why,
// marked isError, which the model reads (a JSON-RPC error would read as a
// broken server).
func refusal(id json.RawMessage, reason string) []byte {
	out, _ := json.Marshal(resultAnswer{ID: id, JSONRPC: "2.0", Result: toolResult{
		Content: []textContent{{Type: "text", Text: "toolgate refused this call: " + reason}},
		IsError: true,
	}})
	return out
}

// rpcError is a JSON-RPC error answer to id (null when nil).
func rpcError(id json.RawMessage, code int, why string) []byte {
	out, _ := json.Marshal(errorAnswer{ID: id, JSONRPC: "2.0", Error: rpcErr{Code: code, Message: why}})
	return out
}

// parseError answers a line the gate could not read (JSON-RPC -32700).
func parseError(why string) []byte { return rpcError(nil, -32700, why) }

// invalidRequest answers a request the gate refuses as malformed
// (JSON-RPC -32600).
func invalidRequest(id json.RawMessage, why string) []byte { return rpcError(id, -32600, why) }

// withoutHidden rewrites a tools/list answer without the tools hidden
// reports; changed is false when none is.
func withoutHidden(line []byte, hidden func(name string) bool) ([]byte, bool, error) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(line, &msg); err != nil {
		return nil, false, err
	}
	var result map[string]json.RawMessage
	if err := json.Unmarshal(msg["result"], &result); err != nil {
		return nil, false, err
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(result["tools"], &tools); err != nil {
		return nil, false, err
	}
	kept := tools[:0:0]
	for _, t := range tools {
		var tool struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &tool) == nil && hidden(tool.Name) {
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) == len(tools) {
		return nil, false, nil
	}
	list, err := json.Marshal(kept)
	if err != nil {
		return nil, false, err
	}
	result["tools"] = list
	if msg["result"], err = json.Marshal(result); err != nil {
		return nil, false, err
	}
	out, err := json.Marshal(msg)
	return out, true, err
}
