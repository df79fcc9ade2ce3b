package mcpgate

import (
	"encoding/json"
	"testing"
)

// TestAnswersBytes: the answers the gate writes itself are, byte for byte,
// what the map literals they replaced wrote (keys sorted, a missing id
// null, HTML characters escaped as encoding/json does).
func TestAnswersBytes(t *testing.T) {
	for _, tc := range []struct {
		note string
		got  []byte
		want string
	}{
		{note: "a refusal", got: refusal(json.RawMessage(`7`), "no <writes>"),
			want: `{"id":7,"jsonrpc":"2.0","result":{"content":[{"text":"toolgate refused this call: no \u003cwrites\u003e","type":"text"}],"isError":true}}`},
		{note: "an error to a string id", got: rpcError(json.RawMessage(`"a"`), codeCancelled, "gone"),
			want: `{"error":{"code":-32001,"message":"gone"},"id":"a","jsonrpc":"2.0"}`},
		{note: "a parse error has a null id", got: parseError("bad"),
			want: `{"error":{"code":-32700,"message":"bad"},"id":null,"jsonrpc":"2.0"}`},
		{note: "an invalid request without an id", got: invalidRequest(nil, "no"),
			want: `{"error":{"code":-32600,"message":"no"},"id":null,"jsonrpc":"2.0"}`},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.note, tc.got, tc.want)
		}
	}
}
