package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/templates"
)

// toolsPage lists the spec's tools and any configured one with its level.
func (u *UI) toolsPage(w http.ResponseWriter, r *http.Request) {
	sec, etag := u.typed()
	render(w, r, http.StatusOK, templates.Tools(templates.ToolsProps{
		Nav: u.nav(r, "/tools"), ETag: etag, Tools: mcpRows(toolRows(sec.Tools), u.mcpToolsSeen(r)),
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
		if engine.IsMCPTool(tool) {
			return "mcp"
		}
		return "path"
	case engine.CategoryNetwork:
		return "network"
	}
	return "other"
}

// saveTool sets a tool's level, or removes it when "not set" is chosen;
// a post without a tool is the page's one Save (saveToolLevels).
func (u *UI) saveTool(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm() // parsed already by the CSRF check, which refuses a form it cannot read
	if _, single := r.PostForm["tool"]; !single {
		u.saveToolLevels(w, r)
		return
	}
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

// saveToolLevels writes, as one edit, every level the form changed: a
// field level:<tool> whose value differs from was:<tool>, the level the
// page showed. Levels left as they were are not written, so a tool someone
// else set meanwhile is refused by the ETag rather than overwritten.
func (u *UI) saveToolLevels(w http.ResponseWriter, r *http.Request) {
	changes := changedLevels(r.PostForm)
	if len(changes) == 0 {
		u.done(w, r, "/tools", nil, templates.T(r.Context(), "flash.toolsnone"))
		return
	}
	_, err := u.pol.SetToolLevels(formETag(r), changes)
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.Tool + " = " + orDefault(c.Level, templates.T(r.Context(), "tools.notset"))
	}
	u.saved(w, r, "/tools", err, templates.T(r.Context(), "flash.toolssaved")+" "+strings.Join(names, ", ")+".")
}

// changedLevels reads the form's level:<tool> fields that differ from
// their was:<tool>, sorted by tool.
func changedLevels(form map[string][]string) []service.ToolLevel {
	var out []service.ToolLevel
	for key, vals := range form {
		tool, ok := strings.CutPrefix(key, "level:")
		if !ok || len(vals) == 0 {
			continue
		}
		level := strings.TrimSpace(vals[0])
		if was := form["was:"+tool]; len(was) > 0 && was[0] == level {
			continue
		}
		out = append(out, service.ToolLevel{Tool: tool, Level: level})
	}
	slices.SortFunc(out, func(a, b service.ToolLevel) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
