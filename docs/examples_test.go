package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/engine/builtin"
)

// example is one decision example of decisions.md: a policy, a call and
// what the engine must answer. Without a builtin_rules key the package
// default built-in rules apply, as on a fresh config dir.
type example struct {
	Name         string         `yaml:"example"`
	Permissions  map[string]any `yaml:"permissions"`
	BuiltinRules *[]any         `yaml:"builtin_rules"`
	Request      struct {
		ToolName  string         `yaml:"tool_name"`
		ToolArgs  map[string]any `yaml:"tool_args"`
		ChannelID string         `yaml:"channel_id"`
		Workspace string         `yaml:"workspace"`
		Scope     *struct {
			AvatarMode         bool   `yaml:"avatar_mode"`
			GroupDigitalAvatar bool   `yaml:"group_digital_avatar"`
			PrincipalUserID    string `yaml:"principal_user_id"`
		} `yaml:"scope"`
	} `yaml:"request"`
	Expect struct {
		Level       string  `yaml:"level"`
		MatchedRule *string `yaml:"matched_rule"`
		Reason      *string `yaml:"reason"`
		// Problems is how many validation problems the policy has; an
		// example shows a broken entry only on purpose.
		Problems int `yaml:"problems"`
	} `yaml:"expect"`
}

// exampleBlock finds the ```yaml blocks whose first line is "example: ...".
var exampleBlock = regexp.MustCompile("(?ms)^```yaml\n(example: .*?)^```")

// Workspace and home every example is decided with, as the page says.
const (
	exampleWorkspace = "/home/dev/project"
	exampleHome      = "/home/dev"
)

func loadExamples(t *testing.T, page string) []example {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []example
	for _, m := range exampleBlock.FindAllStringSubmatch(string(text), -1) {
		var ex example
		dec := yaml.NewDecoder(strings.NewReader(m[1]))
		dec.KnownFields(true)
		if err := dec.Decode(&ex); err != nil {
			t.Fatalf("%s: example does not parse: %v\n%s", page, err, m[1])
		}
		out = append(out, ex)
	}
	return out
}

func defaultBuiltins(t *testing.T) []any {
	t.Helper()
	var doc struct {
		Rules []any `yaml:"rules"`
	}
	if err := yaml.Unmarshal(builtin.Default, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Rules
}

// TestDecisionExamples runs every example of decisions.md against the
// engine, so that the page cannot drift from the code.
func TestDecisionExamples(t *testing.T) {
	examples := loadExamples(t, "decisions.md")
	if len(examples) < 20 {
		t.Fatalf("got %d examples in decisions.md, want at least 20", len(examples))
	}
	seen := map[string]bool{}
	for _, ex := range examples {
		if ex.Name == "" || seen[ex.Name] {
			t.Fatalf("example names must be unique and non-empty: %q", ex.Name)
		}
		seen[ex.Name] = true
		t.Run(ex.Name, func(t *testing.T) {
			builtins := defaultBuiltins(t)
			if ex.BuiltinRules != nil {
				builtins = *ex.BuiltinRules
			}
			e, problems := engine.Compile(ex.Permissions, builtins, engine.Options{Workspace: exampleWorkspace, HomeDir: exampleHome})
			if len(problems) != ex.Expect.Problems {
				t.Fatalf("got %d validation problems %v, want %d", len(problems), problems, ex.Expect.Problems)
			}
			req := &engine.Request{Call: engine.NewCall(ex.Request.ToolName, ex.Request.ToolArgs),
				ChannelID: ex.Request.ChannelID, Workspace: ex.Request.Workspace}
			if s := ex.Request.Scope; s != nil {
				req.Scope = &engine.Scope{AvatarMode: s.AvatarMode, GroupDigitalAvatar: s.GroupDigitalAvatar, PrincipalUserID: s.PrincipalUserID}
			}
			got := e.Evaluate(req)
			if got.Level.String() != ex.Expect.Level {
				t.Errorf("level: got %s, want %s (rule %q, reason %q)", got.Level, ex.Expect.Level, got.MatchedRule, got.Reason)
			}
			if ex.Expect.MatchedRule != nil && got.MatchedRule != *ex.Expect.MatchedRule {
				t.Errorf("matched_rule: got %q, want %q", got.MatchedRule, *ex.Expect.MatchedRule)
			}
			if ex.Expect.Reason != nil && got.Reason != *ex.Expect.Reason {
				t.Errorf("reason: got %q, want %q", got.Reason, *ex.Expect.Reason)
			}
		})
	}
}
