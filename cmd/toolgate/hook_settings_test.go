package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestFoundHandlerReadsHandEdits: a handler in a settings file a person
// edited reads field by field: a field of another type than the agents
// take reads as missing (as a type assertion on the decoded map did), and
// never makes the whole handler unreadable, so doctor and setup still
// find toolgate's handler by its other fields.
func TestFoundHandlerReadsHandEdits(t *testing.T) {
	for _, tc := range []struct {
		note     string
		in       string
		want     foundHandler
		toolgate bool
	}{
		{note: "toolgate's http hook", in: `{"type":"http","url":"http://h:1/api/v1/hooks/claude-code?x=1","timeout":135,"onFailure":"block",
			"headers":{"Authorization":"Bearer $TOOLGATE_TOKEN"},"allowedEnvVars":["TOOLGATE_TOKEN"]}`,
			want: foundHandler{URL: "http://h:1/api/v1/hooks/claude-code?x=1", OnFailure: "block",
				Headers: looseHeaders{"Authorization": "Bearer $TOOLGATE_TOKEN"}, AllowedEnvVars: looseStrings{"TOOLGATE_TOKEN"}}, toolgate: true},
		{note: "a command hook with a timeout written as text", in: `{"type":"command","command":"toolgate hook codex --url u","timeout":"30"}`,
			want: foundHandler{Command: "toolgate hook codex --url u"}, toolgate: true},
		{note: "a url that is no string, a toolgate command", in: `{"url":5,"command":"/x/toolgate hook gemini"}`,
			want: foundHandler{Command: "/x/toolgate hook gemini"}, toolgate: true},
		{note: "headers and allowed vars of other types", in: `{"url":"http://h/api/v1/hooks/codex","headers":{"A":5,"B":"b"},"allowedEnvVars":["HOME",7],"onFailure":true}`,
			want: foundHandler{URL: "http://h/api/v1/hooks/codex", Headers: looseHeaders{"A": "", "B": "b"}, AllowedEnvVars: looseStrings{"HOME"}}, toolgate: true},
		{note: "headers that are no object, a list that is no list", in: `{"command":"log-it","headers":"x","allowedEnvVars":"HOME"}`,
			want: foundHandler{Command: "log-it"}},
		{note: "null", in: `null`},
	} {
		var got foundHandler
		if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
			t.Errorf("%s: %v", tc.note, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.note, got, tc.want)
		}
		if isToolgateHook(got) != tc.toolgate {
			t.Errorf("%s: isToolgateHook = %v, want %v", tc.note, !tc.toolgate, tc.toolgate)
		}
	}
}
