package api

import (
	stdjson "encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeHook checks the lenient decoding of hook events against the
// way the agents themselves read JSON (exact member names): whatever
// decodeHook accepts, a plain map decode reads the same event name, tool
// name, session, cwd and tool input, so toolgate never decides a call
// other than the one the agent runs. Unknown members may be anything.
func FuzzDecodeHook(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"/w","session_id":"s"}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Read","Tool_Name":"Bash","tool_input":{}}`,
		`{"tool_name":"Bash","tool_name":"Read"}`,
		`{"tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf /"}}`,
		`{"tool_name":"Bash","extra":{"deep":[1,2,{"x":null}]},"tool_input":null}`,
		"{\"tool_name\":\"\xff\"}", `{"tool_name":"\u0042ash"}`, `[]`, `null`, `{"tool_name":"x"} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got HookInput
		if decodeHook(data, &got) != nil {
			return
		}
		var m map[string]any
		if err := stdjson.Unmarshal(data, &m); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", data, err)
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		if got.HookEventName != str("hook_event_name") || got.ToolName != str("tool_name") ||
			got.SessionID != str("session_id") || got.Cwd != str("cwd") {
			t.Fatalf("%q: decoded %+v; a plain read gives %v", data, got, m)
		}
		in, _ := m["tool_input"].(map[string]any)
		if len(in) != len(got.ToolInput) || (len(in) > 0 && !reflect.DeepEqual(in, got.ToolInput)) {
			t.Fatalf("%q: tool_input %#v; a plain read gives %#v", data, got.ToolInput, in)
		}
	})
}
