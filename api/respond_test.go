package api

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/service"
)

// TestDecodeStrict: request bodies decode under encoding/json/v2 rules, and
// every body that two JSON parsers could read differently is a 400 naming
// the field.
func TestDecodeStrict(t *testing.T) {
	cases := []struct {
		note, body string
		field      string // "" with wantMsg: an error without a field
		wantMsg    string // "" : no error
	}{
		{note: "a plain call", body: `{"tool_name":"bash","tool_args":{"command":"ls"}}`},
		{note: "white space after", body: "{\"tool_name\":\"bash\"}\n\t "},
		{note: "a member given twice", body: `{"tool_name":"read_file","tool_name":"bash"}`, field: "tool_name", wantMsg: "more than once"},
		{note: "an argument given twice", body: `{"tool_name":"bash","tool_args":{"command":"rm -rf ~","command":"ls"}}`, field: "tool_args.command", wantMsg: "more than once"},
		{note: "a member in other case", body: `{"Tool_Name":"bash"}`, field: "Tool_Name", wantMsg: "unknown field"},
		{note: "an unknown member", body: `{"tool_name":"bash","toolargs":{}}`, field: "toolargs", wantMsg: "unknown field"},
		{note: "a nested unknown member", body: `{"tool_name":"bash","scope":{"avatar":true}}`, field: "scope.avatar", wantMsg: "unknown field"},
		{note: "invalid UTF-8", body: "{\"tool_name\":\"ba\xffsh\"}", field: "tool_name", wantMsg: "UTF-8"},
		{note: "a lone surrogate", body: `{"tool_name":"\ud800"}`, field: "tool_name", wantMsg: "surrogate"},
		{note: "a wrong type", body: `{"tool_name":7}`, field: "tool_name", wantMsg: `must be a string, not number`},
		{note: "a wrong nested type", body: `{"tool_name":"bash","scope":{"avatar_mode":"yes"}}`, field: "scope.avatar_mode", wantMsg: "must be a boolean, not string"},
		{note: "not an object", body: `[1]`, wantMsg: "must be an object, not array"},
		{note: "empty", body: ``, wantMsg: "empty"},
		{note: "cut short", body: `{"tool_name":`, wantMsg: "unexpected end"},
		{note: "not JSON", body: `{tool_name}`, wantMsg: "malformed JSON"},
		{note: "data after", body: `{"tool_name":"bash"} {"tool_name":"read_file"}`, wantMsg: "data after"},
	}
	for _, c := range cases {
		var in EvaluateRequest
		err := decodeStrict(strings.NewReader(c.body), &in)
		if c.wantMsg == "" {
			if err != nil {
				t.Errorf("%s: got %v, want no error", c.note, err)
			}
			continue
		}
		var e *service.Error
		if !errors.As(err, &e) || httpStatus(e.Kind) != 400 || !strings.Contains(e.Message, c.wantMsg) {
			t.Errorf("%s: got %v, want a 400 saying %q", c.note, err, c.wantMsg)
			continue
		}
		if got := errorField(e); got != c.field {
			t.Errorf("%s: field %q, want %q (%v)", c.note, got, c.field, err)
		}
	}
}

// TestDecodeStrictNamesBatchCalls: an error inside a batch names the call.
func TestDecodeStrictNamesBatchCalls(t *testing.T) {
	var in EvaluateBatchRequest
	err := decodeBytes([]byte(`{"calls":[{"tool_name":"bash"},{"tool_name":"bash","bogus":1}]}`), &in)
	var e *service.Error
	if !errors.As(err, &e) || errorField(e) != "calls[1].bogus" {
		t.Errorf("got %v, want a 400 naming calls[1].bogus", err)
	}
}

// errorField is the field of an error's first detail, or "".
func errorField(e *service.Error) string {
	if len(e.Details) == 0 {
		return ""
	}
	return e.Details[0].Field
}

// FuzzDecodeStrict: no body crashes the decoder, and whatever it accepts
// encoding/json (v1, the most common Go reading) reads the same way, so a
// caller's parser has nothing to disagree about.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{
		`{"tool_name":"bash","tool_args":{"command":"ls"}}`,
		`{"tool_name":"bash","Tool_Name":"read_file"}`,
		`{"tool_name":"bash","tool_args":{"a":1,"a":2}}`,
		`{"tool_name":"x","scope":{"avatar_mode":true,"principal_user_id":"u"},"explain":true}`,
		"{\"tool_name\":\"\xff\"}", `{"tool_name":"\ud83d\ude00"}`, `{"tool_args":{"n":1e308}}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got EvaluateRequest
		if decodeBytes(data, &got) != nil {
			return
		}
		var v1 EvaluateRequest
		dec := stdjson.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v1); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", data, err)
		}
		if !reflect.DeepEqual(got, v1) {
			t.Fatalf("%q: decoded %#v; encoding/json reads %#v", data, got, v1)
		}
	})
}
