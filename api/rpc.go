package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/toolgate/toolgate/service"
)

// Standard JSON-RPC 2.0 error codes, and the server codes toolgate adds.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
	rpcInternalError  = -32603
	rpcForbidden      = -32003 // the token's role lacks the right
	rpcNotFound       = -32004 // the tool, rule, override or key is not there
	rpcConflict       = -32009 // the id exists, or config.yaml is broken
	rpcPrecondition   = -32012 // a stale ETag
)

// rpcCall is one decoded request. HasID is false for a notification.
type rpcCall struct {
	ID     json.RawMessage
	HasID  bool
	Method string
	Params json.RawMessage
	// Invalid is set when the request object is not a valid request; the
	// answer is then this error.
	Invalid *RPCError
}

// RPCError is the error object of a JSON-RPC response.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// rpcErrorData is the data of a failed call's error: the HTTP status and
// error code REST would answer, and the details, null when there are none.
type rpcErrorData struct {
	Code    string           `json:"code"`
	Details []service.Detail `json:"details"`
	Status  int              `json:"status"`
}

// rpcDeniedData is the data of a call refused for the token's role: the
// HTTP status and error code, without details.
type rpcDeniedData struct {
	Code   string `json:"code"`
	Status int    `json:"status"`
}

// rpcResponse is one JSON-RPC response.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

var nullID = json.RawMessage("null")

// decodeRPC decodes a request body: one request or a batch. A body that
// is not JSON gives a parse error; an empty batch or a value that is
// neither an object nor an array gives one invalid-request error.
func decodeRPC(data []byte) (calls []rpcCall, batch bool, fail *RPCError) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return nil, false, &RPCError{Code: rpcParseError, Message: "Parse error"}
	}
	if e := ambiguityError(data); e != nil {
		// Members given twice (or strings that are not UTF-8) would let
		// the caller and toolgate read different methods or params.
		return nil, false, &RPCError{Code: rpcInvalidRequest, Message: "Invalid Request: " + e.Message}
	}
	if len(data) > 0 && data[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil || len(items) == 0 {
			return nil, false, &RPCError{Code: rpcInvalidRequest, Message: "Invalid Request: an empty batch"}
		}
		calls = make([]rpcCall, len(items))
		for i, it := range items {
			calls[i] = decodeCall(it)
		}
		return calls, true, nil
	}
	return []rpcCall{decodeCall(data)}, false, nil
}

// decodeCall decodes one request object.
func decodeCall(data json.RawMessage) rpcCall {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return rpcCall{ID: nullID, HasID: true, Invalid: &RPCError{Code: rpcInvalidRequest, Message: "Invalid Request: not an object"}}
	}
	c := rpcCall{ID: nullID}
	if id, ok := obj["id"]; ok {
		c.HasID = true
		if !validID(id) {
			c.ID = nullID
			c.Invalid = &RPCError{Code: rpcInvalidRequest, Message: "Invalid Request: id must be a string, a number or null"}
			return c
		}
		c.ID = id
	}
	invalid := func(msg string) rpcCall {
		c.HasID = true // an invalid request is answered even without an id
		c.Invalid = &RPCError{Code: rpcInvalidRequest, Message: "Invalid Request: " + msg}
		return c
	}
	var version string
	if err := json.Unmarshal(obj["jsonrpc"], &version); err != nil || version != "2.0" {
		return invalid(`jsonrpc must be "2.0"`)
	}
	if err := json.Unmarshal(obj["method"], &c.Method); err != nil || c.Method == "" {
		return invalid("method must be a non-empty string")
	}
	for k := range obj {
		switch k {
		case "jsonrpc", "method", "params", "id":
		default:
			return invalid("unknown member " + k)
		}
	}
	if p, ok := obj["params"]; ok {
		p = bytes.TrimSpace(p)
		if len(p) == 0 || (p[0] != '{' && p[0] != '[') {
			return invalid("params must be an object or an array")
		}
		c.Params = p
	}
	return c
}

// validID tells whether an id is a string, a number or null.
func validID(id json.RawMessage) bool {
	var v any
	if err := json.Unmarshal(id, &v); err != nil {
		return false
	}
	switch v.(type) {
	case string, float64, nil:
		return true
	}
	return false
}

// handleRPC is POST /rpc: JSON-RPC 2.0, single or batch. Responses are
// 200 (errors are in the body); a request of notifications only is 204.
func (s *Server) handleRPC(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, rpcResponse{JSONRPC: "2.0", Error: &RPCError{Code: rpcParseError, Message: "Parse error"}, ID: nullID})
		return
	}
	calls, batch, fail := decodeRPC(data)
	if fail != nil {
		writeJSON(w, http.StatusOK, rpcResponse{JSONRPC: "2.0", Error: fail, ID: nullID})
		return
	}
	responses := make([]rpcResponse, 0, len(calls))
	for _, c := range calls {
		resp := s.callRPC(r, c)
		if c.HasID {
			responses = append(responses, resp)
		}
	}
	switch {
	case len(responses) == 0:
		w.WriteHeader(http.StatusNoContent)
	case batch:
		writeJSON(w, http.StatusOK, responses)
	default:
		writeJSON(w, http.StatusOK, responses[0])
	}
}

// callRPC runs one call.
func (s *Server) callRPC(r *http.Request, c rpcCall) rpcResponse {
	resp := rpcResponse{JSONRPC: "2.0", ID: c.ID}
	if c.Invalid != nil {
		resp.Error = c.Invalid
		return resp
	}
	m, ok := s.rpcMethods[c.Method]
	if !ok {
		resp.Error = &RPCError{Code: rpcMethodNotFound, Message: "Method not found: " + c.Method}
		return resp
	}
	if p, _ := PrincipalFrom(r.Context()); !service.Allowed(p.Role, m.right) {
		e := service.Classify(service.Require(p, m.right))
		resp.Error = &RPCError{Code: rpcForbidden, Message: e.Message, Data: rpcDeniedData{Code: e.Code, Status: httpStatus(e.Kind)}}
		return resp
	}
	var result any
	var err error
	if m.as != nil {
		result, err = m.as(s, r, c.Params)
	} else {
		result, err = m.run(s, c.Params)
	}
	if err != nil {
		resp.Error = rpcErrorOf(r, err)
		return resp
	}
	resp.Result = result
	return resp
}

// rpcErrorOf maps an API error to a JSON-RPC error, keeping the HTTP
// status, code and details in data.
func rpcErrorOf(r *http.Request, err error) *RPCError {
	e := service.Classify(err)
	code := rpcInternalError
	switch e.Kind {
	case service.KindInvalid:
		code = rpcInvalidParams
	case service.KindForbidden:
		// A refusal of the use case (a choice beyond the caller's
		// channels or sessions), as the role check's refusal above.
		code = rpcForbidden
	case service.KindNotFound:
		code = rpcNotFound
	case service.KindConflict:
		code = rpcConflict
	case service.KindStale:
		code = rpcPrecondition
	}
	msg := e.Message
	if code == rpcInternalError {
		writeErrorLog(r, err)
		msg = "Internal error"
	}
	return &RPCError{Code: code, Message: msg, Data: rpcErrorData{Code: e.Code, Details: e.Details, Status: httpStatus(e.Kind)}}
}

// writeErrorLog logs an internal error of an RPC call.
func writeErrorLog(r *http.Request, err error) {
	slog.ErrorContext(r.Context(), "rpc call failed", "path", r.URL.Path, "err", err)
}
