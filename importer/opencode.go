package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// opencode's permission config, as https://opencode.ai/docs/permissions
// documents it: "permission" is a level for everything, or an object of
// permission name → level, or → an object of pattern → level. Patterns
// use * (any run, / included) and ? (one character). The last matching
// entry wins, in the order written: the object's keys, then each
// pattern object's keys. Per-agent blocks (agent.NAME.permission) come
// after the global ones.
//
// toolgate lets the strictest matching rule decide instead. The import
// keeps opencode's decisions this way:
//   - an entry a later entry covers (a later "*" of the same permission,
//     or the same pattern again) never decides in opencode: dropped;
//   - a "*" entry left is the permission's fallback: a tool level, which
//     toolgate consults only when no rule matches, as opencode's fallback;
//     a "*" of every permission is defaults."*";
//   - the other entries become rules. Where an earlier entry is stricter
//     than a later one and both can match a call, opencode gives the
//     later one's level and toolgate would give the earlier one's: the
//     later entry is refused and reported, as is an allow or ask after a
//     fallback deny (a tool-level deny is a baseline no rule overrides).

// opencodeTools are the toolgate tools each opencode permission names:
// edit covers every tool that changes a file.
var opencodeTools = map[string][]string{
	"bash":      {"bash"},
	"read":      {"read_file"},
	"edit":      {"edit_file", "write_file"},
	"write":     {"write_file"},
	"glob":      {"glob"},
	"grep":      {"grep"},
	"list":      {"list_dir"},
	"webfetch":  {"mcp_fetch_webpage"},
	"websearch": {"mcp_free_search"},
}

// ocEntry is one permission entry in opencode's order.
type ocEntry struct {
	where   string
	perm    string // "*" for every permission
	pattern string // "*" for every call
	level   string
	dead    bool
	refused bool
}

// Opencode converts an opencode.json (comments allowed, as in
// opencode.jsonc).
func Opencode(data []byte, opts Options) (*Result, error) {
	root, err := orderedJSON(stripJSONC(data))
	if err != nil {
		return nil, fmt.Errorf("not an opencode config: %w", err)
	}
	obj, ok := root.(*ordered)
	if !ok {
		return nil, errors.New("not an opencode config: not a JSON object")
	}
	r := newResult("opencode")
	var entries []*ocEntry
	if v, ok := obj.get("permission"); ok {
		entries = append(entries, opencodeBlock(r, "permission", v)...)
	}
	if _, ok := obj.get("permissions"); ok {
		// The list form of newer releases ({action, resource, effect}).
		r.problem("permissions", "opencode's newer permissions list is not read yet; the permission block is")
	}
	if agents, ok := obj.get("agent"); ok {
		if a, ok := agents.(*ordered); ok {
			for _, name := range a.keys {
				if ag, ok := a.vals[name].(*ordered); ok {
					if v, ok := ag.get("permission"); ok {
						// An agent's own permissions apply to that agent
						// alone, and toolgate does not know which agent calls.
						for _, e := range opencodeBlock(r, "agent."+name+".permission", v) {
							r.problem(e.where, "applies to the %s agent only; toolgate cannot tell opencode's agents apart", name)
						}
					}
				}
			}
		}
	}
	opencodeConvert(r, entries, opts)
	return r, nil
}

// opencodeBlock flattens a permission value into entries, in order.
func opencodeBlock(r *Result, where string, v any) []*ocEntry {
	if s, ok := v.(string); ok {
		return []*ocEntry{{where: where + ": " + s, perm: "*", pattern: "*", level: s}}
	}
	o, ok := v.(*ordered)
	if !ok {
		r.problem(where, "neither a level nor an object")
		return nil
	}
	var out []*ocEntry
	for _, perm := range o.keys {
		switch pv := o.vals[perm].(type) {
		case string:
			out = append(out, &ocEntry{where: fmt.Sprintf("%s.%s: %s", where, perm, pv), perm: perm, pattern: "*", level: pv})
		case *ordered:
			for _, pat := range pv.keys {
				lvl, _ := pv.vals[pat].(string)
				out = append(out, &ocEntry{where: fmt.Sprintf("%s.%s[%q]: %v", where, perm, pat, pv.vals[pat]), perm: perm, pattern: pat, level: lvl})
			}
		default:
			r.problem(where+"."+perm, "neither a level nor an object of pattern → level")
		}
	}
	return out
}

// opencodeConvert applies last-match-wins to the global entries.
func opencodeConvert(r *Result, entries []*ocEntry, opts Options) {
	var live []*ocEntry
	for i, e := range entries {
		if strictness(e.level) == 0 {
			r.problem(e.where, "%q is not allow, ask or deny", e.level)
			continue
		}
		for _, later := range entries[i+1:] {
			if (later.perm == "*" || later.perm == e.perm) && (later.pattern == "*" || later.pattern == e.pattern) && strictness(later.level) > 0 {
				e.dead = true
				r.drop(e.where, "never decides in opencode: the later %s matches every call it does", later.where)
				break
			}
		}
		if !e.dead {
			live = append(live, e)
		}
	}
	for i, e := range live {
		opencodeEntry(r, e, live[:i], opts)
	}
}

// opencodeEntry converts one live entry; earlier are the live entries
// before it.
func opencodeEntry(r *Result, e *ocEntry, earlier []*ocEntry, opts Options) {
	if e.perm == "*" {
		if e.pattern != "*" {
			r.problem(e.where, "a pattern for every permission has no toolgate counterpart")
			return
		}
		r.Defaults = e.level
		return
	}
	tools, known := opencodeTools[e.perm]
	if !known {
		r.problem(e.where, "opencode's %s permission has no toolgate counterpart", e.perm)
		return
	}
	for _, prev := range earlier {
		if prev.refused || prev.perm != e.perm || strictness(prev.level) <= strictness(e.level) {
			continue
		}
		if prev.pattern == "*" && prev.level == Deny {
			e.refused = true
			r.problem(e.where, "comes after %s: opencode gives %s here, but a tool-level deny in toolgate is a baseline no rule overrides", prev.where, e.level)
			return
		}
		if prev.pattern != "*" && globsMeet(prev.pattern, e.pattern) {
			e.refused = true
			r.problem(e.where, "can match the same calls as the earlier, stricter %s: opencode's last match gives %s there, toolgate's strictest rule would give %s; reorder or narrow them", prev.where, e.level, prev.level)
			return
		}
	}
	desc := "opencode: " + e.perm + " " + e.pattern + ": " + e.level
	idBase := "opencode_" + e.level + "_" + e.perm + "_" + e.pattern
	if e.pattern == "*" {
		for _, t := range tools {
			r.setTool(t, e.level)
		}
		return
	}
	switch e.perm {
	case "bash":
		r.addRule(Rule{Tools: tools, MatchType: "command", Pattern: opencodeShell(e.pattern), Action: e.level, Description: desc}, idBase)
	case "webfetch":
		r.addRule(Rule{Tools: tools, MatchType: "args", Pattern: urlRegexp(e.pattern), Action: e.level, Description: desc}, idBase)
	case "websearch":
		r.problem(e.where, "toolgate does not match search queries; only the whole websearch permission is carried over")
	default:
		p, reason := opencodePath(e.pattern, opts)
		if reason != "" {
			e.refused = true
			r.problem(e.where, "%s", reason)
			return
		}
		r.addRule(Rule{Tools: tools, MatchType: "path", Pattern: p, Action: e.level, Description: desc}, idBase)
	}
}

// opencodeShell is a bash pattern as a toolgate pattern: opencode's * and
// ? are toolgate's glob wildcards, a trailing " *" matches the command
// alone in both, and a \ (which a toolgate glob reads as /) makes it a
// regexp.
func opencodeShell(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	return "re:^" + wildcardRegexp(p, ".*", ".") + "$"
}

// opencodePath is a path pattern as a toolgate glob over absolute paths:
// relative to the project root, ~/ and $HOME/ under the home. opencode's *
// crosses /, as a toolgate glob's does.
func opencodePath(p string, opts Options) (string, string) {
	switch {
	case strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "$HOME/"):
		if opts.Home == "" {
			return "", "~/ needs the home directory (--home)"
		}
		_, rest, _ := strings.Cut(p, "/")
		return joinPath(opts.Home, rest), ""
	case strings.HasPrefix(p, "/"):
		return p, ""
	case opts.Project == "":
		return "", "the path is relative to the project, and no project is known: give --project DIR"
	}
	return joinPath(opts.Project, p), ""
}

// ordered is a JSON object that keeps its keys' order, which decides in
// opencode.
type ordered struct {
	keys []string
	vals map[string]any
}

func (o *ordered) get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

// orderedJSON decodes one JSON value with objects as *ordered.
func orderedJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &ordered{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[k]; dup {
				return nil, fmt.Errorf("the key %q appears twice", k)
			}
			o.keys = append(o.keys, k)
			o.vals[k] = v
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		var l []any
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.Token()
		return l, err
	}
	return tok, nil
}

// stripJSONC removes // and /* */ comments outside strings and commas
// before a closing bracket, as opencode reads its config.
func stripJSONC(data []byte) []byte {
	var out []byte
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			out = append(out, c)
			if c == '\\' && i+1 < len(data) {
				i++
				out = append(out, data[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 3
		case c == '}' || c == ']':
			trimmed := bytes.TrimRight(out, " \t\r\n")
			if n := len(trimmed); n > 0 && trimmed[n-1] == ',' {
				space := string(out[n:])
				out = append(out[:n-1], space...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}
