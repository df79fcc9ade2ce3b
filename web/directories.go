package web

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/templates"
)

// directoriesPage shows external_directory.
func (u *UI) directoriesPage(w http.ResponseWriter, r *http.Request) {
	render(w, r, http.StatusOK, templates.Directories(u.directoriesProps(r, nil)))
}

func (u *UI) directoriesProps(r *http.Request, trusted *templates.TrustedResult) templates.DirectoriesProps {
	sec, etag := u.section()
	p := templates.DirectoriesProps{Nav: u.nav(r, "/directories"), ETag: etag, Trusted: trusted, Star: "ask"}
	switch v := sec["external_directory"].(type) {
	case string:
		p.Star = strings.ToLower(v)
	default:
		m := asMap(v)
		if s := str(m["*"]); s != "" {
			p.Star = strings.ToLower(s)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != "*" {
				p.Entries = append(p.Entries, templates.DirRow{Key: k, Level: strings.ToLower(str(m[k]))})
			}
		}
	}
	return p
}

// saveDirectory sets the level of a prefix (or of "*").
func (u *UI) saveDirectory(w http.ResponseWriter, r *http.Request) {
	if u.stale(w, r, "/directories") {
		return
	}
	key, level := strings.TrimSpace(r.PostFormValue("key")), r.PostFormValue("level")
	_, err := u.deps.Policy.SetExternalDirectory(key, level)
	u.done(w, r, "/directories", err, "Saved: "+key+" is now "+level+".")
}

// deleteDirectory removes a prefix.
func (u *UI) deleteDirectory(w http.ResponseWriter, r *http.Request) {
	if u.stale(w, r, "/directories") {
		return
	}
	key := r.PostFormValue("key")
	if !u.confirmed(w, r, "/directories", templates.ConfirmProps{Title: "Delete directory " + key + "?",
		Lead:   "external_directory[" + key + "] will be removed.",
		Points: []string{"Paths under it then get the level of * (any other external path)."},
		Button: "Delete directory"}) {
		return
	}
	_, err := u.deps.Policy.DeleteExternalDirectory(key)
	u.done(w, r, "/directories", err, "Deleted "+key+".")
}

// trustDirectory is /add-dir; the page then shows the overrides it made.
func (u *UI) trustDirectory(w http.ResponseWriter, r *http.Request) {
	if u.stale(w, r, "/directories") {
		return
	}
	dir := strings.TrimSpace(r.PostFormValue("path"))
	if !u.confirmed(w, r, "/directories", templates.ConfirmProps{Title: "Trust " + dir + "?",
		Lead: "Trusting " + dir + " writes up to three entries to config.yaml:", Points: trustPoints(dir),
		Button: "Trust directory"}) {
		return
	}
	res, err := u.deps.Policy.AddTrustedDirectory(dir)
	if err != nil {
		u.done(w, r, "/directories", err, "")
		return
	}
	tr := &templates.TrustedResult{Dir: res.Dir, Tiered: res.Tiered, Existing: res.Existing}
	for _, o := range res.Created {
		tr.Created = append(tr.Created, overrideRow(o))
	}
	u.flash(r, "ok", "Trusted "+res.Dir+".")
	render(w, r, http.StatusOK, templates.Directories(u.directoriesProps(r, tr)))
}

// trustPoints spell out what trusting a directory allows: the
// external-directory entry and the two approval overrides it writes.
func trustPoints(dir string) []string {
	return []string{
		"external_directory[" + dir + "] = allow: calls that name paths under it are no longer asked about for being outside the workspace.",
		"An approval override (cli_trusted_path_…) that allows path tools (read_file, write_file, edit_file, …) on any path under " + dir + " without asking, writes included.",
		"An approval override (cli_trusted_shell_…) that allows shell commands (bash, …) naming a path under " + dir + " without asking, whatever the command does there.",
		"The overrides are written only with a tiered policy. Built-in and your own deny rules still win over them; revoke them on the Overrides page.",
	}
}
