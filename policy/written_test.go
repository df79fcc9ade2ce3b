package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// encodeBoth is the JSON of v as an answer writes it (HTML not escaped)
// and as json.Marshal writes it.
func encodeBoth(t *testing.T, v any) (plain, escaped string, err error) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", "", err
	}
	data, err := json.Marshal(v)
	return b.String(), string(data), err
}

// checkWritten fails when Written loses anything of the decoded section m:
// Map gives m back and the JSON of Written is the JSON of m, byte for byte.
func checkWritten(t *testing.T, note string, m map[string]any) {
	t.Helper()
	w := WrittenOf(m)
	// fmt prints maps sorted and NaN as NaN, which DeepEqual never equals.
	if back := w.Map(); !reflect.DeepEqual(back, m) && !(m == nil && len(back) == 0) && fmt.Sprintf("%#v", back) != fmt.Sprintf("%#v", m) {
		t.Errorf("%s: Map() = %#v, want %#v", note, back, m)
	}
	wantPlain, wantEsc, wantErr := encodeBoth(t, m)
	gotPlain, gotEsc, gotErr := encodeBoth(t, w)
	if m == nil {
		wantPlain, wantEsc = "{}\n", "{}"
	}
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("%s: error %v, want %v", note, gotErr, wantErr)
	}
	if gotPlain != wantPlain || gotEsc != wantEsc {
		t.Errorf("%s: JSON\n%s%s\nwant\n%s%s", note, gotPlain, gotEsc, wantPlain, wantEsc)
	}
}

// writtenSectionOf is the permissions mapping of a config.yaml text.
func writtenSectionOf(t *testing.T, data []byte) (map[string]any, bool) {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false
	}
	sec, ok := doc["permissions"].(map[string]any)
	return sec, ok
}

// TestWrittenKeepsEveryConfig reads every config the project tests with
// (store testdata and golden files, the reference cases) as written and
// checks nothing is lost.
func TestWrittenKeepsEveryConfig(t *testing.T) {
	files, _ := filepath.Glob("../store/testdata/*.yaml")
	golden, _ := filepath.Glob("../store/testdata/golden/*.yaml")
	n := 0
	for _, f := range append(files, golden...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Golden files hold the document before and after, split by ---.
		for _, part := range bytes.Split(data, []byte("\n---")) {
			if sec, ok := writtenSectionOf(t, part); ok {
				checkWritten(t, f, sec)
				n++
			}
		}
	}
	fh, err := os.Open("../engine/testdata/reference-cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct {
			Name        string         `json:"name"`
			Permissions map[string]any `json:"permissions"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		checkWritten(t, c.Name, c.Permissions)
		n++
	}
	if n < 200 {
		t.Fatalf("only %d sections read", n)
	}
}

// TestWrittenKeepsWhatSectionDrops pins the shapes policy.Section reads
// lossily: each must come back exactly as written.
func TestWrittenKeepsWhatSectionDrops(t *testing.T) {
	for _, c := range []struct{ note, yaml string }{
		{"levels in any case", "tools: {bash: DENY, read: Allow}\ndefaults: {'*': ASK}"},
		{"tools scalar in a rule", "rules: [{id: a, tools: bash, pattern: x, action: deny}]"},
		{"guidance with spaces", "deny_guidance_message: '  padded\n'"},
		{"schema as a number", "schema: 4.2\nversion: 2"},
		{"defaults' other keys", "defaults: {'*': ask, other: 1, nested: {a: b}}"},
		{"tool sub-keys and legacy patterns under tiered", "schema: tiered_policy\ntools: {bash: {'*': ask, patterns: {'git *': allow}, extra: [1]}}"},
		{"empty mappings and lists", "external_directory: {}\ndefaults: {}\nowner_scopes: {}\nrules: []\napproval_overrides: []\ntools: {}"},
		{"null keys", "enabled:\nrules:\ntools:\nexternal_directory:\nowner_scopes:\nschema:"},
		{"enabled as text", "enabled: 'no'"},
		{"broken entries", "rules: [5, null, [a], {id: 7}, {id: x, tools: [bash], pattern: 12}]\napproval_overrides: {a: b}"},
		{"broken owner scopes", "owner_scopes: {feishu: {tools: {bash: allow}}, slack: {u: {tools: {bash: MAYBE}, defaults: x}}}"},
		{"external as a level", "external_directory: DENY"},
		{"unknown keys", "zzz: 1\naaa: {b: [1, '<&>']}\nrules_x: []"},
		{"html and unicode", "deny_guidance_message: '<b>\u2028&</b>'\nrules: [{id: '<x>', pattern: '&&'}]"},
		{"timestamps and big numbers", "rules: [{id: a, created_at: 2024-01-02, n: 123456789012345678, f: 1e30}]"},
	} {
		var sec map[string]any
		if err := yaml.Unmarshal([]byte(c.yaml), &sec); err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		checkWritten(t, c.note, sec)
	}
}

// TestWrittenViews checks the views the doors read.
func TestWrittenViews(t *testing.T) {
	var sec map[string]any
	_ = yaml.Unmarshal([]byte("rules: [{id: a, pattern: x}, {id: 7}, 5]\ntools: bash\ndefaults: {'*': ask}\nenabled:"), &sec)
	w := WrittenOf(sec)
	if e, ok := w.Rules.Find("a"); !ok || e.Any().(map[string]any)["pattern"] != "x" {
		t.Errorf("Find(a) = %v, %v", e, ok)
	}
	if _, ok := w.Rules.Find(""); ok {
		t.Error("Find(\"\") found an entry without a string id")
	}
	if w.Tools.IsMapping() || len(w.Tools.OrEmpty().Keys) != 0 || !w.Tools.OrEmpty().IsMapping() {
		t.Errorf("tools %v: a scalar is not a mapping; OrEmpty is {}", w.Tools)
	}
	if !w.Enabled.Set() || w.Enabled.Any() != nil || w.Version.Set() || w.Version.Ptr() != nil {
		t.Errorf("presence: enabled %v version %v", w.Enabled, w.Version)
	}
	if v, ok := w.Defaults.Get("*"); !ok || v.Any() != "ask" {
		t.Errorf("defaults * = %v", v)
	}
	if len(WrittenOf(nil).Rules.All()) != 0 || WrittenOf(nil).Rules.All() == nil {
		t.Error("All of an absent list is not []")
	}
}

// FuzzWrittenJSON compares Written with the map path for any JSON section:
// the same mapping back and the same JSON.
func FuzzWrittenJSON(f *testing.F) {
	for _, s := range []string{
		`{"tools":{"bash":"DENY","x":{"*":"ask","patterns":{"a":"allow"},"q":1}},"rules":[1,{"id":"a"},null]}`,
		`{"schema":4.2,"enabled":"yes","defaults":{"*":"x","o":[]},"external_directory":{},"owner_scopes":null}`,
		`{"approval_overrides":{"a":1},"zz":"<&>","deny_guidance_message":" a "}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil {
			return
		}
		checkWritten(t, string(data), m)
	})
}

// TestRuleFieldPlaces: the field constants name the keys of RuleFields in
// its order, which ruleValues is indexed by.
func TestRuleFieldPlaces(t *testing.T) {
	for place, key := range map[int]string{fieldID: "id", fieldTools: "tools", fieldPattern: "pattern", fieldAction: "action",
		fieldSeverity: "severity", fieldMatchType: "match_type", fieldDescription: "description", fieldSource: "source",
		fieldExamples: "examples", fieldMode: "mode"} {
		if RuleFields[place] != key || ruleField(key) != place {
			t.Errorf("place %d: RuleFields has %q, want %q", place, RuleFields[place], key)
		}
	}
	if ruleField("approved_by") != -1 {
		t.Error("approved_by is not a rule field")
	}
}

// FuzzWrittenYAML compares Written with the map path for any YAML
// section, as config.yaml decodes (map[any]any inside where a key is not
// a string, timestamps, big numbers): the same mapping back and the same
// JSON.
func FuzzWrittenYAML(f *testing.F) {
	for _, s := range []string{
		"tools: {bash: DENY, x: {'*': ask, patterns: {a: allow}, q: 1}}\nrules: [1, {id: a}, null]",
		"schema: 4.2\nenabled: yes\ndefaults: {'*': x, o: []}\nexternal_directory: {}\nowner_scopes:",
		"approval_overrides: {a: 1}\nzz: '<&>'\ndeny_guidance_message: ' a '\nrules: [{1: 2, created_at: 2024-01-02}]",
		"schema: .nan\ntools: {bash: .inf}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if yaml.Unmarshal(data, &m) != nil {
			return
		}
		checkWritten(t, string(data), m)
	})
}
