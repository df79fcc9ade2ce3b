package web

import (
	"net/http"
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
	if level, ok := sec.External.Text(); ok {
		p.Star = strings.ToLower(level)
		return p
	}
	for _, f := range sec.External.Keys { // sorted
		level := strings.ToLower(str(f.Value.Any()))
		switch {
		case f.Key != "*":
			p.Entries = append(p.Entries, templates.DirRow{Key: f.Key, Level: level})
		case level != "":
			p.Star = level
		}
	}
	return p
}

// saveDirectory sets the level of a prefix (or of "*").
func (u *UI) saveDirectory(w http.ResponseWriter, r *http.Request) {
	key, level := strings.TrimSpace(r.PostFormValue("key")), r.PostFormValue("level")
	_, err := u.pol.SetExternal(formETag(r), key, level)
	u.saved(w, r, "/directories", err, templates.T(r.Context(), "flash.saved")+" "+key+" = "+level+".")
}

// deleteDirectory removes a prefix.
func (u *UI) deleteDirectory(w http.ResponseWriter, r *http.Request) {
	if u.stale(w, r, "/directories") {
		return
	}
	key := r.PostFormValue("key")
	t := translatorFor(r.Context())
	if !u.confirmed(w, r, "/directories", removal(t, "confirm.deldir", key, "external_directory["+key+"]")) {
		return
	}
	_, err := u.pol.DeleteExternal(formETag(r), key)
	u.saved(w, r, "/directories", err, t("flash.deleted")+" "+key+".")
}

// trustDirectory is /add-dir; the page then shows the overrides it made.
func (u *UI) trustDirectory(w http.ResponseWriter, r *http.Request) {
	if u.stale(w, r, "/directories") {
		return
	}
	dir := strings.TrimSpace(r.PostFormValue("path"))
	t := translatorFor(r.Context())
	if !u.confirmed(w, r, "/directories", templates.ConfirmProps{Title: t("confirm.trust") + " " + dir + "?",
		Lead: t("confirm.trust.lead") + " " + dir, Points: trustPoints(dir, t),
		Button: t("confirm.trust")}) {
		return
	}
	res, err := u.pol.AddDir(formETag(r), dir)
	if err != nil {
		u.saved(w, r, "/directories", err, "")
		return
	}
	tr := &templates.TrustedResult{Dir: res.Dir, Tiered: res.Tiered, Existing: res.Existing}
	for i := range res.Created {
		tr.Created = append(tr.Created, overrideRow(&res.Created[i]))
	}
	u.flash(r, "ok", t("flash.trusted")+" "+res.Dir+".")
	render(w, r, http.StatusOK, templates.Directories(u.directoriesProps(r, tr)))
}

// trustPoints spell out what trusting a directory allows: the
// external-directory entry and the two approval overrides it writes.
func trustPoints(dir string, t translator) []string {
	return []string{
		"external_directory[" + dir + "] = allow: " + t("trust.dir"),
		"cli_trusted_path_…: " + t("trust.path") + " " + dir,
		"cli_trusted_shell_…: " + t("trust.shell") + " " + dir,
		t("trust.note"),
	}
}
