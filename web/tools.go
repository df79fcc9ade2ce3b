package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/templates"
)

// toolsPage lists the spec's tools and any configured one with its level.
func (u *UI) toolsPage(w http.ResponseWriter, r *http.Request) {
	sec, etag := u.typed()
	render(w, r, http.StatusOK, templates.Tools(templates.ToolsProps{
		Nav: u.nav(r, "/tools"), ETag: etag, Tools: toolRows(sec.Tools),
		Default: orAsk(sec.Defaults.String()),
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

// toolRows lists the known tools, then the other configured ones sorted
// (the section's tools are sorted by name). A tool written as a mapping
// ({"*": level}, legacy patterns) is marked Legacy.
func toolRows(configured []policy.ToolSetting) []templates.ToolRow {
	known := knownTools()
	rows := make([]templates.ToolRow, 0, len(known)+len(configured))
	row := func(name string) templates.ToolRow {
		return templates.ToolRow{Name: name, Category: categoryName(name)}
	}
	for _, name := range known {
		rows = append(rows, row(name))
	}
	for _, t := range configured {
		i := slices.Index(known, t.Name)
		if i < 0 {
			i = len(rows)
			rows = append(rows, row(t.Name))
		}
		rows[i].Level = t.Level.String()
		rows[i].Legacy = t.Star || t.Patterns != nil
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
