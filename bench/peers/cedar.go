package peers

import (
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/policy"

	cedar "github.com/cedar-policy/cedar-go"
)

// Cedar policies, written as a Cedar deployment writes a policy of many
// rules:
//   - one policy per rule: a permit for an allow rule, a forbid for a deny
//     rule, so Cedar's own combining (a forbid overrides any permit) gives
//     deny over everything;
//   - an ask rule is a permit annotated @level("ask"). Cedar has two
//     answers, not three; the annotation travels with the policy and the
//     determining policies of an Allow (Diagnostic.Reasons) say whether
//     one of them asks. This keeps one authorization per call; a second
//     policy set for asks would cost a second one on every allow;
//   - the glob is `like`, where * matches any text; "**" becomes "*", and
//     a trailing " *", which also matches nothing in toolgate, adds an
//     equality to the bare command;
//   - the workspace check is a policy too: an ask permit on the path tools
//     unless the path is under the workspace;
//   - policy slicing: a deployment with many policies hands Authorize only
//     the policies that can apply to the request's resource. The slice
//     here is chosen by the tool and the value's leading parts (the
//     policies filed under IndexKey), the same index the Rego policy
//     reads, built once at compile time;
//   - no hit (Deny with no determining policy) falls to the tool's level,
//     which lives beside the policies as Cedar has no default answer but
//     deny.

// cedarPolicy is one compiled policy and whether it is an ask.
type cedarPolicy struct {
	id  cedar.PolicyID
	p   *cedar.Policy
	ask bool
}

// cedarEngine holds the slices: by tool, then by index key.
type cedarEngine struct {
	slices map[string]map[string][]cedarPolicy
	// always are the policies of every call of a tool (the workspace check).
	always map[string][]cedarPolicy
	asks   map[cedar.PolicyID]bool
}

// cedarText writes the rule as Cedar: annotations, effect, scope on the
// action (the tool), condition on the value.
func cedarText(r Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@id(%q)\n", r.ID)
	effect := "permit"
	switch r.Action {
	case policy.Deny:
		effect = "forbid"
	case policy.Ask:
		b.WriteString("@level(\"ask\")\n")
	}
	attr := "path"
	if isShell(r.Tools[0]) {
		attr = "command"
	}
	cond := fmt.Sprintf("context.%s like %s", attr, strconv.Quote(cedarLike(r.Pattern)))
	if body, ok := strings.CutSuffix(r.Pattern, " *"); ok {
		// A trailing " *" also matches nothing in toolgate: "git push *"
		// matches "git push".
		cond += fmt.Sprintf(" || context.%s == %s", attr, strconv.Quote(body))
	}
	fmt.Fprintf(&b, "%s (principal, action in [%s], resource) when { %s };\n",
		effect, cedarActions(r.Tools), cond)
	return b.String()
}

// cedarActions is the Cedar list of the tools' actions: Action::"bash", ...
func cedarActions(tools []string) string {
	a := make([]string, len(tools))
	for i, t := range tools {
		a[i] = fmt.Sprintf("Action::%q", t)
	}
	return strings.Join(a, ", ")
}

// cedarLike turns a toolgate glob into a like pattern: ** and * both match
// any text.
func cedarLike(glob string) string {
	for strings.Contains(glob, "**") {
		glob = strings.ReplaceAll(glob, "**", "*")
	}
	return glob
}

// workspacePolicy asks for a path tool call outside the workspace.
func workspacePolicy() string {
	return fmt.Sprintf("@id(\"external_directory\")\n@level(\"ask\")\npermit (principal, action in [%s], resource) unless { context.path like %q };\n",
		cedarActions(pathTools), Workspace+"/*")
}

// NewCedar parses one policy per rule and files each under its tool and
// index key.
func NewCedar(rules []Rule) (Engine, error) {
	var doc strings.Builder
	for _, r := range rules {
		doc.WriteString(cedarText(r))
	}
	doc.WriteString(workspacePolicy())
	list, err := cedar.NewPolicyListFromBytes("rules.cedar", []byte(doc.String()))
	if err != nil {
		return nil, fmt.Errorf("cedar parse: %w", err)
	}
	c := &cedarEngine{slices: map[string]map[string][]cedarPolicy{}, always: map[string][]cedarPolicy{},
		asks: map[cedar.PolicyID]bool{}}
	for i, p := range list {
		cp := cedarPolicy{id: cedar.PolicyID(p.Annotations()["id"]), p: p, ask: p.Annotations()["level"] == "ask"}
		c.asks[cp.id] = cp.ask
		if i == len(rules) {
			for _, t := range pathTools {
				c.always[t] = append(c.always[t], cp)
			}
			continue
		}
		for _, t := range rules[i].Tools {
			if c.slices[t] == nil {
				c.slices[t] = map[string][]cedarPolicy{}
			}
			k := IndexKey(t, rules[i].Pattern)
			c.slices[t][k] = append(c.slices[t][k], cp)
		}
	}
	return c, nil
}

// Name is "Cedar".
func (c *cedarEngine) Name() string { return "Cedar" }

// cedarSlice is the policies one request is authorized against: up to
// maxKeyParts+2 slices, walked in turn.
type cedarSlice struct {
	parts [maxKeyParts + 2][]cedarPolicy
	n     int
}

// All walks the slices' policies (cedar.PolicyIterator).
func (s *cedarSlice) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, part := range s.parts[:s.n] {
			for _, p := range part {
				if !yield(p.id, p.p) {
					return
				}
			}
		}
	}
}

// slice picks the policies of a call: the tool's always-on policies and
// those filed under each leading 0..maxKeyParts parts of the value.
func (c *cedarEngine) slice(tool, value string, s *cedarSlice) {
	if a := c.always[tool]; len(a) > 0 {
		s.parts[s.n], s.n = a, s.n+1
	}
	byKey := c.slices[tool]
	if byKey == nil {
		return
	}
	sep := separator(tool)
	end, prev := 0, -1 // value[:end] is the first k parts
	for k := 0; ; k++ {
		if end != prev { // a path's first part is empty: "" twice
			if p := byKey[value[:end]]; len(p) > 0 {
				s.parts[s.n], s.n = p, s.n+1
			}
		}
		if k == maxKeyParts || end == len(value) {
			return
		}
		prev = end
		start := end
		if k > 0 {
			start += len(sep)
		}
		if i := strings.Index(value[start:], sep); i >= 0 {
			end = start + i
		} else {
			end = len(value)
		}
	}
}

// Bind keeps the call; each decision slices, builds the Cedar request and
// authorizes it.
func (c *cedarEngine) Bind(call Call) func() policy.Level {
	attr := cedar.String("path")
	if isShell(call.Tool) {
		attr = "command"
	}
	tool, value := call.Tool, call.value()
	return func() policy.Level {
		var s cedarSlice
		c.slice(tool, value, &s)
		req := cedar.Request{
			Principal: cedar.NewEntityUID("Agent", "agent"),
			Action:    cedar.NewEntityUID("Action", cedar.String(tool)),
			Resource:  cedar.NewEntityUID("Call", ""),
			Context:   cedar.NewRecord(cedar.RecordMap{attr: cedar.String(value)}),
		}
		dec, diag := cedar.Authorize(&s, nil, req)
		switch {
		case len(diag.Errors) > 0:
			return policy.LevelNone
		case dec == cedar.Deny && len(diag.Reasons) > 0:
			return policy.Deny
		case dec == cedar.Allow:
			for _, r := range diag.Reasons {
				if c.asks[r.PolicyID] {
					return policy.Ask
				}
			}
			return policy.Allow
		}
		if l, ok := toolLevels[tool]; ok {
			return l
		}
		return defaultLevel
	}
}
