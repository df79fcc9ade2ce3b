package api

import (
	"encoding/json"
	"testing"
)

func TestDecodeRPC(t *testing.T) {
	cases := []struct {
		note      string
		body      string
		wantFail  int
		wantCalls int
		wantBatch bool
		wantBad   int // calls with an invalid-request error
	}{
		{"single", `{"jsonrpc":"2.0","method":"m","id":1}`, 0, 1, false, 0},
		{"not JSON", `{"jsonrpc"`, rpcParseError, 0, false, 0},
		{"empty batch", `[]`, rpcInvalidRequest, 0, false, 0},
		{"batch", `[{"jsonrpc":"2.0","method":"m"},1,{"jsonrpc":"2.0","method":"m","id":"x"}]`, 0, 3, true, 1},
		{"a number", `7`, 0, 1, false, 1},
		{"bad version", `{"jsonrpc":"1.0","method":"m","id":1}`, 0, 1, false, 1},
		{"params a string", `{"jsonrpc":"2.0","method":"m","params":"x","id":1}`, 0, 1, false, 1},
		{"id an object", `{"jsonrpc":"2.0","method":"m","id":{}}`, 0, 1, false, 1},
		// Read two ways by two parsers: refused as a whole.
		{"method given twice", `{"jsonrpc":"2.0","method":"permissions.get","method":"permissions.rules.delete","id":1}`, rpcInvalidRequest, 0, false, 0},
		{"a param given twice", `{"jsonrpc":"2.0","method":"m","params":{"id":"a","id":"b"},"id":1}`, rpcInvalidRequest, 0, false, 0},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"method\":\"m\xff\",\"id\":1}", rpcInvalidRequest, 0, false, 0},
	}
	for _, c := range cases {
		calls, batch, fail := decodeRPC([]byte(c.body))
		gotFail := 0
		if fail != nil {
			gotFail = fail.Code
		}
		bad := 0
		for _, cl := range calls {
			if cl.Invalid != nil {
				bad++
			}
		}
		if gotFail != c.wantFail || len(calls) != c.wantCalls || batch != c.wantBatch || bad != c.wantBad {
			t.Errorf("%s: fail %d calls %d batch %v bad %d; want %d %d %v %d", c.note, gotFail, len(calls), batch, bad, c.wantFail, c.wantCalls, c.wantBatch, c.wantBad)
		}
	}
}

func FuzzRPCDecode(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","method":"permissions.tools.get","id":1}`, `[{"jsonrpc":"2.0","method":"m"}]`, `[]`, `{"jsonrpc":"2.0","method":"m","params":[1],"id":null}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		calls, _, fail := decodeRPC(data)
		if fail != nil {
			return
		}
		for _, c := range calls {
			if c.Invalid == nil && c.Method == "" {
				t.Fatalf("decodeRPC(%q): a valid call without a method", data)
			}
			if !json.Valid(c.ID) {
				t.Fatalf("decodeRPC(%q): id %q is not JSON", data, c.ID)
			}
		}
	})
}
