package web

import (
	"net/http"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/templates"
)

// toolsPage lists the spec's tools and any configured one with its level.
func (u *UI) toolsPage(w http.ResponseWriter, r *http.Request) {
	sec, etag := u.section()
	render(w, r, http.StatusOK, templates.Tools(templates.ToolsProps{
		Nav: u.nav(r, "/tools"), ETag: etag, Tools: toolRows(asMap(sec["tools"])),
		Default: orAsk(str(asMap(sec["defaults"])["*"])),
	}))
}

func orAsk(s string) string {
	if s == "" {
		return "ask"
	}
	return s
}

// knownTools are the tools of the spec's categories, in the spec's order.
func knownTools() []string {
	var all []string
	all = append(all, engine.ShellTools...)
	all = append(all, engine.PathTools...)
	return append(all, engine.NetworkTools...)
}

// toolRows lists the known tools, then the other configured ones sorted.
func toolRows(configured map[string]any) []templates.ToolRow {
	seen := map[string]bool{}
	var rows []templates.ToolRow
	add := func(name string) {
		seen[name] = true
		row := templates.ToolRow{Name: name, Category: categoryName(name)}
		switch v := configured[name].(type) {
		case string:
			row.Level = strings.ToLower(v)
		case nil:
		default:
			row.Legacy = true
			row.Level = str(asMap(v)["*"])
		}
		rows = append(rows, row)
	}
	for _, t := range knownTools() {
		add(t)
	}
	var extra []string
	for t := range configured {
		if !seen[t] {
			extra = append(extra, t)
		}
	}
	sort.Strings(extra)
	for _, t := range extra {
		add(t)
	}
	return rows
}

// categoryName names a tool's category in words.
func categoryName(tool string) string {
	switch engine.ToolCategory(tool) {
	case engine.CategoryShell:
		return "shell"
	case engine.CategoryPath:
		return "path"
	case engine.CategoryNetwork:
		return "network"
	}
	return "other"
}

// saveTool sets a tool's level, or removes it when "not set" is chosen.
func (u *UI) saveTool(w http.ResponseWriter, r *http.Request) {
	tool := strings.TrimSpace(r.PostFormValue("tool"))
	level := r.PostFormValue("level")
	if level == "" {
		_, err := u.pol.DeleteTool(formETag(r), tool)
		u.saved(w, r, "/tools", err, templates.T(r.Context(), "flash.toolunset")+" "+tool+".")
		return
	}
	_, err := u.pol.SetToolLevel(formETag(r), tool, level)
	u.saved(w, r, "/tools", err, templates.T(r.Context(), "flash.saved")+" "+tool+" = "+level+".")
}
