package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// geminiAllowPath is where Gemini CLI lists the variables it passes on to
// MCP servers: it drops every variable whose name holds TOKEN (and KEY,
// SECRET...) from a stdio server's environment, and expands $VAR in a
// server's env from that same filtered environment, so without this entry
// the gateway would start with no token and refuse to run.
var geminiAllowPath = []string{"security", "environmentVariableRedaction", "allowed"}

// wrapJSONServers wraps (or unwraps) the servers of a JSON settings file:
// Claude Code's .mcp.json and ~/.claude.json (the user's servers and each
// project's), Gemini CLI's settings.json. Every other key stays as and
// where it was.
func wrapJSONServers(agent string, old []byte, f mcpFile, w mcpWrap, remove bool) ([]byte, mcpFileReport, error) {
	var rep mcpFileReport
	root, err := parseObject(old)
	if err != nil {
		return nil, rep, fmt.Errorf("cannot read it as JSON (%w): fix or move it first", err)
	}
	if !f.onlyProjects {
		if _, err := editJSONServers(root, "mcpServers", "mcpServers", w, remove, &rep); err != nil {
			return nil, rep, err
		}
	}
	if agent == "claude-code" && filepath.Base(f.path) == ".claude.json" {
		if err := editProjectServers(root, f.project, w, remove, &rep); err != nil {
			return nil, rep, err
		}
	}
	if agent == "gemini" && w.tokenFile == "" {
		gated := rep.gated()
		if gated || remove {
			ch, err := editNestedList(root, geminiAllowPath, tokenEnv, gated)
			if err != nil {
				return nil, rep, err
			}
			if ch && gated {
				rep.extra = append(rep.extra, "security.environmentVariableRedaction.allowed: + "+tokenEnv+" (so that Gemini CLI passes the gateway its token)")
			} else if ch {
				rep.extra = append(rep.extra, "security.environmentVariableRedaction.allowed: - "+tokenEnv+" (no server runs behind toolgate mcp now)")
			}
		}
	}
	data, err := root.indented()
	return data, rep, err
}

// gated tells whether any server of the file runs behind the gateway once
// the file is written.
func (r mcpFileReport) gated() bool {
	for _, m := range r.outcomes {
		if m.gated {
			return true
		}
	}
	return false
}

// editProjectServers edits the servers of ~/.claude.json's projects: one
// project's with --project, else every project's.
func editProjectServers(root *jsonObject, project string, w mcpWrap, remove bool, rep *mcpFileReport) error {
	projects, err := root.object("projects")
	if err != nil {
		return err
	}
	edited := false
	for _, p := range projects.keys {
		if project != "" && filepath.Clean(p) != filepath.Clean(project) {
			continue
		}
		proj, err := projects.object(p)
		if err != nil {
			return fmt.Errorf("projects: %w", err)
		}
		changed, err := editJSONServers(proj, "mcpServers", fmt.Sprintf("projects[%q].mcpServers", p), w, remove, rep)
		if err != nil {
			return err
		}
		if changed {
			raw, err := proj.MarshalJSON()
			if err != nil {
				return err
			}
			projects.set(p, raw)
			edited = true
		}
	}
	if !edited {
		return nil
	}
	raw, err := projects.MarshalJSON()
	if err != nil {
		return err
	}
	root.set("projects", raw)
	return nil
}

// editJSONServers wraps or unwraps each server of parent[key]; label
// names that object in the report. It reports whether it changed any.
func editJSONServers(parent *jsonObject, key, label string, w mcpWrap, remove bool, rep *mcpFileReport) (bool, error) {
	raw, ok := parent.get(key)
	if !ok || string(raw) == "null" {
		return false, nil
	}
	servers, err := parseObject(raw)
	if err != nil {
		return false, fmt.Errorf("%s: %w", label, err)
	}
	changed := false
	for _, name := range servers.keys {
		where := label + "." + name
		entry, err := parseObject(servers.vals[name])
		if err != nil {
			rep.outcomes = append(rep.outcomes, mcpOutcome{where: where, action: "not wrapped", reason: "not a JSON object"})
			continue
		}
		command, args, remote, bad := readJSONServer(entry)
		if bad != "" {
			rep.outcomes = append(rep.outcomes, mcpOutcome{where: where, action: "not wrapped", reason: bad})
			continue
		}
		m := decideServer(w, remove, where, name, command, args, remote)
		rep.outcomes = append(rep.outcomes, m)
		if !m.changed() {
			continue
		}
		cmd, err := marshalPlain(m.after[0])
		if err != nil {
			return false, err
		}
		argv, err := marshalPlain(m.after[1:])
		if err != nil {
			return false, err
		}
		entry.set("command", cmd)
		entry.set("args", argv)
		b, err := entry.MarshalJSON()
		if err != nil {
			return false, err
		}
		servers.set(name, b)
		changed = true
	}
	if !changed {
		return false, nil
	}
	b, err := servers.MarshalJSON()
	if err != nil {
		return false, err
	}
	parent.set(key, b)
	return true, nil
}

// readJSONServer reads an entry's command line, or its URL when the agent
// reaches it over HTTP (Claude Code's type http/sse and url, Gemini CLI's
// httpUrl and url). bad says why an entry cannot be read.
func readJSONServer(entry *jsonObject) (command string, args []string, remote, bad string) {
	var typ string
	if raw, ok := entry.get("type"); ok && json.Unmarshal(raw, &typ) != nil {
		return "", nil, "", "its type is not a string"
	}
	for _, k := range []string{"httpUrl", "url"} {
		if raw, ok := entry.get(k); ok {
			var u string
			if json.Unmarshal(raw, &u) != nil {
				return "", nil, "", "its " + k + " is not a string"
			}
			if u != "" && remote == "" {
				remote = u
			}
		}
	}
	if remote == "" && typ != "" && typ != "stdio" {
		remote = "type " + typ
	}
	if remote != "" {
		return "", nil, remote, ""
	}
	if raw, ok := entry.get("command"); ok && json.Unmarshal(raw, &command) != nil {
		return "", nil, "", "its command is not a string"
	}
	if raw, ok := entry.get("args"); ok && string(raw) != "null" && json.Unmarshal(raw, &args) != nil {
		return "", nil, "", "its args are not a list of strings"
	}
	return command, args, "", ""
}

// editNestedList adds value to (or takes it out of) the list of strings
// at path; objects on the way are made when adding and removed when left
// empty. It reports whether it changed anything.
func editNestedList(o *jsonObject, path []string, value string, add bool) (bool, error) {
	key := path[0]
	if len(path) > 1 {
		inner, err := o.object(key)
		if err != nil {
			return false, err
		}
		changed, err := editNestedList(inner, path[1:], value, add)
		if err != nil || !changed {
			return changed, err
		}
		if len(inner.keys) == 0 {
			o.remove(key)
			return true, nil
		}
		raw, err := inner.MarshalJSON()
		if err != nil {
			return false, err
		}
		o.set(key, raw)
		return true, nil
	}
	var list []json.RawMessage
	if raw, ok := o.get(key); ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &list); err != nil {
			return false, fmt.Errorf("%q is not a list: %w", key, err)
		}
	}
	kept := list[:0:0]
	found := false
	for _, item := range list {
		var s string
		if json.Unmarshal(item, &s) == nil && s == value {
			found = true
			if add {
				return false, nil
			}
			continue
		}
		kept = append(kept, item)
	}
	switch {
	case add:
		v, err := marshalPlain(value)
		if err != nil {
			return false, err
		}
		kept = append(kept, v)
	case !found:
		return false, nil
	case len(kept) == 0:
		o.remove(key)
		return true, nil
	}
	raw, err := marshalPlain(kept)
	if err != nil {
		return false, err
	}
	o.set(key, raw)
	return true, nil
}
