package web

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/templates"
)

// ownersPage lists permissions.owner_scopes, read only (docs/decisions.md
// "Digital persona").
func (u *UI) ownersPage(w http.ResponseWriter, r *http.Request) {
	render(w, r, http.StatusOK, templates.Owners(u.ownersProps(r)))
}

func (u *UI) ownersProps(r *http.Request) templates.OwnersProps {
	sec, _ := u.section()
	p := templates.OwnersProps{Nav: u.nav(r, "/owners"), Rows: ownerRows(asMap(sec["owner_scopes"]))}
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
func ownerRows(scopes map[string]any) []templates.OwnerRow {
	var rows []templates.OwnerRow
	for _, ch := range slices.Sorted(maps.Keys(scopes)) {
		principals := asMap(scopes[ch])
		for _, pid := range slices.Sorted(maps.Keys(principals)) {
			scope := asMap(principals[pid])
			if scope == nil {
				continue
			}
			row := templates.OwnerRow{Channel: ch, Principal: pid}
			tools := asMap(scope["tools"])
			for _, t := range slices.Sorted(maps.Keys(tools)) {
				row.Tool = t
				entry, isMap := tools[t].(map[string]any)
				if !isMap {
					row.Match, row.Level = "", str(tools[t])
					rows = append(rows, row)
					continue
				}
				pats := asMap(entry["patterns"])
				for _, pat := range slices.Sorted(maps.Keys(pats)) {
					row.Match, row.Level = pat, str(pats[pat])
					rows = append(rows, row)
				}
				if star, has := entry["*"]; has {
					row.Match, row.Level = "", str(star)
					rows = append(rows, row)
				}
			}
			if def, has := asMap(scope["defaults"])["*"]; has {
				row.Tool, row.Match, row.Level = "", "", str(def)
				rows = append(rows, row)
			}
		}
	}
	return rows
}
