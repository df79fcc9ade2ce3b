package api

import (
	"bytes"
	stdjson "encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/policy"
)

// hardStrings are strings whose JSON needs every kind of escape.
var hardStrings = []string{
	"", "plain", `quote " and back\slash`, "<html> & 'single'", "\b\f\n\r\t\x00\x01\x1f\x7f",
	"bad utf-8 \xff\xfe end", "cut \xe2\x82", "line\u2028sep\u2029end", "é ß 日本 🙂", "\u00a0nbsp", strings.Repeat("x", 600),
}

// TestWriteDecisionSameBytes: the hand-built answers of evaluate and
// evaluate/batch are byte for byte, status and headers what writeJSON
// writes for the same decisions (a decision with a Trace takes writeJSON).
func TestWriteDecisionSameBytes(t *testing.T) {
	var decisions []engine.Decision
	for i, s := range hardStrings {
		decisions = append(decisions,
			engine.Decision{Level: policy.Level(i % 3), MatchedRule: s, Reason: s},
			engine.Decision{Level: policy.Ask, Reason: "no rule " + s},
			engine.Decision{Level: policy.Deny, MatchedRule: "r", Reason: s, ExternalPaths: []string{s, "/etc/" + s}},
		)
	}
	decisions = append(decisions, engine.Decision{Level: policy.Allow, Reason: "x", Trace: []engine.Step{{}}})
	for i, d := range decisions {
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		writeDecision(got, d)
		writeJSON(want, http.StatusOK, decisionWire(d))
		sameAnswer(t, "decision "+string(rune('0'+i%10)), got, want)
	}
	for _, batch := range [][]engine.Decision{decisions[:len(decisions)-1], decisions, {}, decisions[:1]} {
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		writeDecisions(got, batch)
		out := EvaluateBatchResponse{Decisions: make([]EvaluateResponse, len(batch))}
		for i, d := range batch {
			out.Decisions[i] = decisionWire(d)
		}
		writeJSON(want, http.StatusOK, out)
		sameAnswer(t, "batch", got, want)
	}
}

func sameAnswer(t *testing.T, note string, got, want *httptest.ResponseRecorder) {
	t.Helper()
	if got.Code != want.Code || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || !reflect.DeepEqual(got.Header(), want.Header()) {
		t.Errorf("%s:\n got %d %v %q\nwant %d %v %q", note, got.Code, got.Header(), got.Body.String(), want.Code, want.Header(), want.Body.String())
	}
}

// TestEvaluateResponseFields: appendDecision writes these fields of
// EvaluateResponse; a new field must be added there too, or the fast
// answer would leave it out.
func TestEvaluateResponseFields(t *testing.T) {
	var got []string
	rt := reflect.TypeFor[EvaluateResponse]()
	for i := range rt.NumField() {
		got = append(got, rt.Field(i).Name+" "+rt.Field(i).Tag.Get("json"))
	}
	want := []string{"Level level", "MatchedRule matched_rule", "Reason reason", "ExternalPaths external_paths,omitempty", "Trace trace,omitempty"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EvaluateResponse fields %q, appendDecision writes %q: update appendDecision and this test", got, want)
	}
}

// FuzzAppendJSONString: any string is quoted as encoding/json quotes it
// with HTML escaping off.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range hardStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := stdjson.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := jsontext.AppendString(nil, s); string(got)+"\n" != want.String() {
			t.Errorf("%q: got %s, want %s", s, got, want.String())
		}
	})
}
