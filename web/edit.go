package web

import (
	"errors"
	"net/http"

	"github.com/toolgate/toolgate/store"
)

// formETag is the ETag a form was rendered with, given to the policy
// service as If-Match: the check and the write are then one step, so an
// edit made after the page was rendered is refused, not lost. Every form of
// the pages carries it; one without it never matches.
func formETag(r *http.Request) string {
	if tag := r.PostFormValue("etag"); tag != "" {
		return tag
	}
	return "\x00missing"
}

// saved answers a policy edit: the conflict page when the form's ETag was
// stale at write time, else a flash message and a redirect back (done).
func (u *UI) saved(w http.ResponseWriter, r *http.Request, back string, err error, ok string) {
	if errors.Is(err, store.ErrPreconditionFailed) {
		u.conflict(w, r, back)
		return
	}
	u.done(w, r, back, err, ok)
}
