package main

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex keeps its MCP servers in config.toml as [mcp_servers.NAME] tables.
// setup edits that file as text, only where it must: the value of command,
// the start of args and env_vars, so that comments, order and every other
// key stay as the person wrote them. The whole file is read by a TOML
// parser first (a file it cannot read is left alone), and the edited text
// is read again and must hold exactly the old document with those values
// changed, or nothing is written.

// tomlKV is one `key = value` line of a server's table.
type tomlKV struct {
	start, end int      // the key's first byte and the value's end
	valStart   int      // the value's first byte ([ for an array)
	elems      [][2]int // an array's elements: [start, end)
	strs       []string // their values, when strings
}

// tomlServer is what the text of one [mcp_servers.NAME] table holds.
type tomlServer struct {
	command, args, envVars *tomlKV
}

// at is where the server's first key lies in the text (-1: nowhere).
func (t tomlServer) at() int {
	for _, kv := range []*tomlKV{t.command, t.args, t.envVars} {
		if kv != nil {
			return kv.start
		}
	}
	return -1
}

// tomlEdit replaces text[start:end] by text; a line edit puts text as
// new lines after the line that holds start.
type tomlEdit struct {
	start, end int
	text       string
	line       bool
}

// wrapTOMLServers wraps (or unwraps) the servers of a Codex config.toml.
func wrapTOMLServers(old []byte, w mcpWrap, remove bool) ([]byte, mcpFileReport, error) {
	var rep mcpFileReport
	doc, err := decodeTOML(old)
	if err != nil {
		return nil, rep, err
	}
	serversAny, ok := doc["mcp_servers"]
	if !ok {
		return old, rep, nil
	}
	servers, ok := serversAny.(map[string]any)
	if !ok {
		return nil, rep, errors.New("mcp_servers is not a table")
	}
	found, err := scanTOMLServers(old)
	if err != nil {
		return nil, rep, err
	}
	want, _ := decodeTOML(old) // the document the edited text must hold
	wantServers := want["mcp_servers"].(map[string]any)
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Slice(names, func(a, b int) bool { // in the file's order
		pa, pb := found[names[a]].at(), found[names[b]].at()
		if pa != pb {
			return pa < pb
		}
		return names[a] < names[b]
	})
	var edits []tomlEdit
	for _, name := range names {
		m, e := planTOMLServer(old, name, servers[name], found[name], w, remove, wantServers)
		rep.outcomes = append(rep.outcomes, m)
		edits = append(edits, e...)
	}
	if len(edits) == 0 {
		return old, rep, nil
	}
	data := applyEdits(old, edits)
	got, err := decodeTOML(data)
	if err != nil || !reflect.DeepEqual(got, want) {
		return nil, rep, fmt.Errorf("setup could not edit its [mcp_servers] tables exactly (%v): wrap them by hand", err)
	}
	return data, rep, nil
}

// decodeTOML reads a whole TOML document; an error names the line.
func decodeTOML(data []byte) (map[string]any, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, fmt.Errorf("cannot read it as TOML (line %d: %w): fix or move it first", row, err)
		}
		return nil, fmt.Errorf("cannot read it as TOML (%w): fix or move it first", err)
	}
	return doc, nil
}

// planTOMLServer decides one server and the text edits that carry the
// decision out; it records in want what the server must read afterwards.
func planTOMLServer(text []byte, name string, v any, t tomlServer, w mcpWrap, remove bool, want map[string]any) (mcpOutcome, []tomlEdit) {
	where := "[mcp_servers." + tomlKey(name) + "]"
	entry, ok := v.(map[string]any)
	if !ok {
		return mcpOutcome{where: where, action: "not wrapped", reason: "not a table"}, nil
	}
	command, args, remote, bad := readTOMLServer(entry)
	if bad != "" {
		return mcpOutcome{where: where, action: "not wrapped", reason: bad}, nil
	}
	m := decideServer(w, remove, where, name, command, args, remote)
	if !m.changed() {
		return m, nil
	}
	_, hasArgs := entry["args"]
	_, hasEnvVars := entry["env_vars"]
	if t.command == nil || (hasArgs && t.args == nil) || (hasEnvVars && t.envVars == nil) {
		m.action, m.gated = "not wrapped", false
		m.reason = "setup edits only command, args and env_vars written as keys of its own [mcp_servers.NAME] table: wrap it by hand"
		if remove {
			m.action, m.gated = "not unwrapped", true
		}
		m.before, m.after = nil, nil
		return m, nil
	}
	return m, tomlServerEdits(text, m, t, w, remove, want[name].(map[string]any))
}

// tomlServerEdits is the text edits of one server whose command line goes
// from m.before to m.after; it sets the same values in want.
func tomlServerEdits(text []byte, m mcpOutcome, t tomlServer, w mcpWrap, remove bool, want map[string]any) []tomlEdit {
	edits := []tomlEdit{{start: t.command.valStart, end: t.command.end, text: tomlString(m.after[0])}}
	want["command"] = m.after[0]
	want["args"] = anyList(m.after[1:])
	if remove {
		return append(edits, unwrapTOMLEdits(text, m, t, want)...)
	}
	return append(edits, wrapTOMLEdits(text, m, t, w, want)...)
}

// wrapTOMLEdits puts the gateway's words first in args (or writes args),
// and without a token file adds TOOLGATE_TOKEN to env_vars, which is how
// Codex passes a variable of its own environment on to a server.
func wrapTOMLEdits(text []byte, m mcpOutcome, t tomlServer, w mcpWrap, want map[string]any) []tomlEdit {
	var edits []tomlEdit
	var added []string // new key lines, after the command's (or args') line
	lineEnd := t.command.end
	if t.args != nil {
		prefix := m.after[1 : len(m.after)-len(m.before)+1] // the gateway's words and the old command
		edits = append(edits, tomlEdit{start: t.args.valStart + 1, end: t.args.valStart + 1, text: tomlList(prefix) + listSep(text, t.args)})
		lineEnd = max(lineEnd, t.args.end)
	} else {
		added = append(added, "args = ["+tomlList(m.after[1:])+"]")
	}
	if w.tokenFile == "" {
		switch {
		case t.envVars == nil:
			added = append(added, "env_vars = ["+tomlString(tokenEnv)+"]")
			want["env_vars"] = []any{tokenEnv}
		case !containsString(t.envVars.strs, tokenEnv):
			at := t.envVars.valStart + 1
			edits = append(edits, tomlEdit{start: at, end: at, text: tomlString(tokenEnv) + listSep(text, t.envVars)})
			old, _ := want["env_vars"].([]any)
			want["env_vars"] = append([]any{tokenEnv}, old...)
		}
	}
	if len(added) > 0 {
		edits = append(edits, tomlEdit{start: lineEnd, end: lineEnd, text: strings.Join(added, "\n"), line: true})
	}
	return edits
}

// unwrapTOMLEdits takes the gateway's words out of args (the whole line
// when nothing is left of it), and TOOLGATE_TOKEN out of env_vars: a
// server of its own never needs toolgate's token.
func unwrapTOMLEdits(text []byte, m mcpOutcome, t tomlServer, want map[string]any) []tomlEdit {
	var edits []tomlEdit
	cut := len(m.before) - len(m.after) // the gateway's words and the server's command
	el := t.args.elems
	switch e, whole := wholeLine(text, t.args); {
	case cut < len(el):
		edits = append(edits, tomlEdit{start: el[0][0], end: afterSep(text, el[cut-1][1])})
	case whole:
		edits = append(edits, e)
		delete(want, "args")
	default:
		edits = append(edits, tomlEdit{start: el[0][0], end: t.args.end - 1})
	}
	if t.envVars == nil {
		return edits
	}
	i := indexString(t.envVars.strs, tokenEnv)
	if i < 0 {
		return edits
	}
	rest := []any{}
	for j, s := range t.envVars.strs {
		if j != i {
			rest = append(rest, s)
		}
	}
	want["env_vars"] = rest
	if e, ok := wholeLine(text, t.envVars); ok && len(rest) == 0 {
		delete(want, "env_vars")
		return append(edits, e)
	}
	return append(edits, dropElement(text, t.envVars, i))
}

// listSep is what goes between the words setup puts first in an array and
// its old elements: nothing when it is empty, a comma alone when they
// start on the next line, else a comma and a space.
func listSep(text []byte, kv *tomlKV) string {
	switch {
	case len(kv.elems) == 0:
		return ""
	case text[kv.valStart+1] == '\n' || text[kv.valStart+1] == '\r':
		return ","
	}
	return ", "
}

// afterSep is the end of the separator listSep wrote after position pos:
// the comma and one space.
func afterSep(text []byte, pos int) int {
	if pos < len(text) && text[pos] == ',' {
		pos++
		if pos < len(text) && text[pos] == ' ' {
			pos++
		}
	}
	return pos
}

// wholeLine is the edit that removes a key's line, when the line holds
// nothing else (not even a comment).
func wholeLine(text []byte, kv *tomlKV) (tomlEdit, bool) {
	start := bytes.LastIndexByte(text[:kv.start], '\n') + 1
	if len(bytes.TrimSpace(text[start:kv.start])) > 0 {
		return tomlEdit{}, false
	}
	end := len(text)
	if nl := bytes.IndexByte(text[kv.end:], '\n'); nl >= 0 {
		end = kv.end + nl + 1
	}
	if len(bytes.TrimSpace(text[kv.end:end])) > 0 {
		return tomlEdit{}, false
	}
	return tomlEdit{start: start, end: end}, true
}

// dropElement takes element i out of an array: with the comma (and one
// space) after it, or the comma before it when it is the last.
func dropElement(text []byte, kv *tomlKV, i int) tomlEdit {
	el := kv.elems
	switch {
	case len(el) == 1:
		return tomlEdit{start: el[0][0], end: kv.end - 1}
	case i+1 < len(el):
		return tomlEdit{start: el[i][0], end: afterSep(text, el[i][1])}
	}
	return tomlEdit{start: el[i-1][1], end: el[i][1]}
}

// applyEdits applies edits to text, the last first.
func applyEdits(text []byte, edits []tomlEdit) []byte {
	for i, e := range edits {
		if !e.line {
			continue
		}
		pos := e.start
		nl := bytes.IndexByte(text[pos:], '\n')
		if nl < 0 {
			edits[i] = tomlEdit{start: len(text), end: len(text), text: "\n" + e.text + "\n"}
		} else {
			edits[i] = tomlEdit{start: pos + nl + 1, end: pos + nl + 1, text: e.text + "\n"}
		}
	}
	sort.SliceStable(edits, func(a, b int) bool { return edits[a].start > edits[b].start })
	out := append([]byte(nil), text...)
	for _, e := range edits {
		out = append(out[:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	return out
}

// readTOMLServer reads a decoded server table like readJSONServer.
func readTOMLServer(entry map[string]any) (command string, args []string, remote, bad string) {
	if u, ok := entry["url"]; ok {
		s, _ := u.(string)
		if s == "" {
			return "", nil, "", "its url is not a string"
		}
		return "", nil, s, ""
	}
	if c, ok := entry["command"]; ok {
		if command, ok = c.(string); !ok {
			return "", nil, "", "its command is not a string"
		}
	}
	if a, ok := entry["args"]; ok {
		list, ok := a.([]any)
		if !ok {
			return "", nil, "", "its args are not a list of strings"
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return "", nil, "", "its args are not a list of strings"
			}
			args = append(args, s)
		}
	}
	if ev, ok := entry["env_vars"]; ok {
		list, ok := ev.([]any)
		for _, x := range list {
			if _, isStr := x.(string); !isStr {
				ok = false
			}
		}
		if !ok {
			return "", nil, "", "its env_vars are not a list of names"
		}
	}
	return command, args, "", ""
}

// scanTOMLServers finds, in the text, the command, args and env_vars keys
// written inside each [mcp_servers.NAME] table.
func scanTOMLServers(data []byte) (map[string]tomlServer, error) {
	found := map[string]tomlServer{}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = keyParts(e.Key())
		case unstable.ArrayTable:
			table = nil
		case unstable.KeyValue:
			key := keyParts(e.Key())
			if len(table) != 2 || table[0] != "mcp_servers" || len(key) != 1 {
				continue
			}
			kv, err := readKV(data, e)
			if err != nil {
				return nil, err
			}
			s := found[table[1]]
			switch key[0] {
			case "command":
				s.command = kv
			case "args":
				s.args = kv
			case "env_vars":
				s.envVars = kv
			}
			found[table[1]] = s
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("cannot read it as TOML (%w): fix or move it first", err)
	}
	return found, nil
}

// readKV records where a key's value lies.
func readKV(data []byte, e *unstable.Node) (*tomlKV, error) {
	kv := &tomlKV{start: int(e.Raw.Offset), end: int(e.Raw.Offset + e.Raw.Length)}
	keyEnd := kv.start
	for it := e.Key(); it.Next(); {
		keyEnd = int(it.Node().Raw.Offset + it.Node().Raw.Length)
	}
	eq := bytes.IndexByte(data[keyEnd:kv.end], '=')
	if eq < 0 {
		return nil, fmt.Errorf("line %d: no = after the key", lineAt(data, int64(keyEnd)))
	}
	kv.valStart = keyEnd + eq + 1
	for kv.valStart < kv.end && (data[kv.valStart] == ' ' || data[kv.valStart] == '\t') {
		kv.valStart++
	}
	v := e.Value()
	if v.Kind != unstable.Array {
		return kv, nil
	}
	for it := v.Children(); it.Next(); {
		n := it.Node()
		if n.Kind == unstable.Comment {
			continue
		}
		kv.elems = append(kv.elems, [2]int{int(n.Raw.Offset), int(n.Raw.Offset + n.Raw.Length)})
		kv.strs = append(kv.strs, string(n.Data))
	}
	return kv, nil
}

// keyParts is a dotted key's parts.
func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// tomlKey writes a table name part: bare when it can be.
func tomlKey(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// tomlString is a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlList is the inside of an array of strings.
func tomlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	return strings.Join(q, ", ")
}

func anyList(items []string) []any {
	out := make([]any, len(items))
	for i, s := range items {
		out[i] = s
	}
	return out
}

func containsString(list []string, s string) bool { return indexString(list, s) >= 0 }

func indexString(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
