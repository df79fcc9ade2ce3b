package web

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/templates"
)

// ownersPage lists permissions.owner_scopes, read only (docs/decisions.md
// "Digital persona").
func (u *UI) ownersPage(w http.ResponseWriter, r *http.Request) {
	render(w, r, http.StatusOK, templates.Owners(u.ownersProps(r)))
}

func (u *UI) ownersProps(r *http.Request) templates.OwnersProps {
	sec, _ := u.section()
	p := templates.OwnersProps{Nav: u.nav(r, "/owners"), Rows: ownerRows(sec.Owners)}
	for _, pr := range u.deps.Policy.Problems() {
		if strings.HasPrefix(pr.Path, "permissions.owner_scopes") {
			p.Problems = append(p.Problems, problemText(pr, translatorFor(r.Context())))
		}
	}
	return p
}

// ownerRows flattens owner_scopes.<channel>.<principal> into rows, sorted:
// each tool's patterns, then its "*" or plain level, then the defaults. An
// entry that is not in this shape (such as one in toolgate's earlier
// shape) has no rows; validation reports it.
func ownerRows(scopes policy.Mapping) []templates.OwnerRow {
	var rows []templates.OwnerRow
	for _, ch := range scopes.Keys {
		for _, pr := range policy.MappingOf(ch.Value.Any()).Keys {
			scope := policy.MappingOf(pr.Value.Any())
			if !scope.IsMapping() {
				continue
			}
			row := templates.OwnerRow{Channel: ch.Key, Principal: pr.Key}
			tools, _ := scope.Get("tools")
			for _, t := range policy.MappingOf(tools.Any()).Keys {
				row.Tool = t.Key
				entry := policy.MappingOf(t.Value.Any())
				if !entry.IsMapping() {
					row.Match, row.Level = "", str(t.Value.Any())
					rows = append(rows, row)
					continue
				}
				pats, _ := entry.Get("patterns")
				for _, pat := range policy.MappingOf(pats.Any()).Keys {
					row.Match, row.Level = pat.Key, str(pat.Value.Any())
					rows = append(rows, row)
				}
				if star, has := entry.Get("*"); has {
					row.Match, row.Level = "", str(star.Any())
					rows = append(rows, row)
				}
			}
			defaults, _ := scope.Get("defaults")
			if def, has := policy.MappingOf(defaults.Any()).Get("*"); has {
				row.Tool, row.Match, row.Level = "", "", str(def.Any())
				rows = append(rows, row)
			}
		}
	}
	return rows
}
