package api

import (
	"log/slog"
	"net/http"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

// approvalView is how the approvals routes show an approval's arguments:
// with secrets masked, like the pages and the decision log
// (docs/decisions.md#what-a-person-sees), unless an admin asks for the raw
// arguments with ?raw=true, which is logged.
type approvalView struct{ raw bool }

// readApprovalView reads ?raw=; only an admin may ask for it.
func readApprovalView(r *http.Request) (approvalView, error) {
	if r.URL.Query().Get("raw") != "true" {
		return approvalView{}, nil
	}
	p, _ := PrincipalFrom(r.Context())
	if p.Role != auth.RoleAdmin {
		return approvalView{}, service.Forbidden("raw", "only an admin token may read the raw arguments")
	}
	slog.InfoContext(r.Context(), "raw approval arguments read", "token", p.TokenID, "name", p.Name, "path", r.URL.Path)
	return approvalView{raw: true}, nil
}

// one shows one approval.
func (v approvalView) one(a approval.Approval) approval.Approval {
	if !v.raw {
		a.Request.ToolArgs = redact.Args(a.Request.ToolArgs)
		if a.Grant != nil {
			g := shownGrant(*a.Grant)
			a.Grant = &g
		}
	}
	return a
}

// list shows a list of approvals.
func (v approvalView) list(in []approval.Approval) []approval.Approval {
	out := make([]approval.Approval, len(in))
	for i, a := range in {
		out[i] = v.one(a)
	}
	return out
}
