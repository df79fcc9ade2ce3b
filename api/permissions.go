package api

import (
	"errors"
	"net/http"
	"strings"
	"syscall"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
)

// PolicyStore is the policy on disk as the editing routes need it;
// *store.Store is one. Every method that writes locks, validates and writes
// atomically, and returns the new ETag of the section.
type PolicyStore interface {
	Section() (map[string]any, string, error)
	ToolOrder() []string
	BuiltinRules() ([]any, string)
	Validate(section map[string]any) []engine.Problem
	ReplaceSection(section map[string]any, ifMatch string) (string, error)
	SetSettings(patch map[string]any) (string, error)
	SetToolLevel(tool, level string) (string, error)
	DeleteTool(tool string) (string, error)
	CreateRule(rule map[string]any) (string, error)
	UpdateRule(id string, patch map[string]any) (string, error)
	DeleteRule(id string) (string, error)
	AddApprovalOverride(o map[string]any) (string, error)
	DeleteApprovalOverride(id string) (string, error)
	SetExternalDirectory(key, level string) (string, error)
	DeleteExternalDirectory(key string) (string, error)
	SetOwnerScopes(scopes map[string]any) (string, error)
	AddTrustedDirectory(path string) (store.AddDirResult, error)
}

func init() {
	errorMappers = append(errorMappers, storeError)
}

// storeError maps the store's errors: a validation error is a 400 whose
// details name each place, not found 404, exists 409, a stale ETag 412 and
// an unparsable config.yaml 409 (fix the file first).
func storeError(err error) *Error {
	var ve *store.ValidationError
	switch {
	case errors.As(err, &ve):
		e := &Error{Status: http.StatusBadRequest, Code: CodeInvalid, Message: "the policy would not validate", cause: err}
		for _, p := range ve.Problems {
			e.Details = append(e.Details, Detail{Field: p.Path, Message: p.Message})
		}
		if len(ve.Problems) == 1 {
			e.Message = ve.Problems[0].Path + ": " + ve.Problems[0].Message
		}
		return e
	case errors.Is(err, store.ErrNotFound), errors.Is(err, auth.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: trimStorePrefix(err), cause: err}
	case errors.Is(err, store.ErrExists):
		return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: trimStorePrefix(err), cause: err}
	case errors.Is(err, store.ErrPreconditionFailed):
		return &Error{Status: http.StatusPreconditionFailed, Code: CodePreconditionFailed,
			Message: "the permissions section changed since that ETag; GET it again", cause: err}
	case errors.Is(err, store.ErrBrokenConfig):
		return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: trimStorePrefix(err), cause: err}
	case errors.Is(err, auth.ErrBadRole):
		return badRequest("role", "%v", err)
	case errors.Is(err, store.ErrNoPattern):
		// "always allow" for a call with nothing to remember (a network
		// tool): the choice cannot be honoured, and the ask stays pending.
		return badRequest("choice", "always allow needs a command or a path to remember; this call has neither: answer allow_once or deny")
	case errors.Is(err, store.ErrNotAsk):
		// The policy changed since the ask: it no longer asks.
		return &Error{Status: http.StatusConflict, Code: CodeConflict,
			Message: "always allow is only for a call the policy asks about, and it no longer does; answer allow_once or deny", cause: err}
	}
	return writeFailure(err)
}

// writeFailure maps a config dir that cannot be written (full disk, file
// size limit, read-only file system, no permission) to a clear 507 or 503:
// nothing was written and the policy in force is unchanged.
func writeFailure(err error) *Error {
	const unchanged = "; nothing was written and the policy in force is unchanged"
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG} {
		if errors.Is(err, errno) {
			return &Error{Status: http.StatusInsufficientStorage, Code: CodeStorageFull,
				Message: "config.yaml could not be written: " + errno.Error() + " (the disk is full or a size limit is reached)" + unchanged, cause: err}
		}
	}
	for _, errno := range []syscall.Errno{syscall.EROFS, syscall.EACCES, syscall.EPERM} {
		if errors.Is(err, errno) {
			return &Error{Status: http.StatusServiceUnavailable, Code: CodeStorageReadOnly,
				Message: "config.yaml could not be written: " + errno.Error() + " (the config dir is read-only)" + unchanged, cause: err}
		}
	}
	return nil
}

func trimStorePrefix(err error) string {
	return strings.ReplaceAll(err.Error(), "store: ", "")
}

// mountPermissions adds the policy routes under /api/v1 (contract 5).
func (s *Server) mountPermissions(r chi.Router) {
	read, write := r.With(require(rightRead)), r.With(require(rightWrite))
	read.Get("/permissions", s.handleGetSection)
	write.Put("/permissions", s.handlePutSection)
	read.Get("/permissions/settings", s.handleGetSettings)
	write.Patch("/permissions/settings", s.handlePatchSettings)
	read.Get("/permissions/tools", s.handleListTools)
	write.Put("/permissions/tools/{tool}", s.handlePutTool)
	write.Delete("/permissions/tools/{tool}", s.handleDeleteTool)
	read.Get("/permissions/rules", s.handleListRules)
	write.Post("/permissions/rules", s.handleCreateRule)
	read.Get("/permissions/rules/{id}", s.handleGetRule)
	write.Patch("/permissions/rules/{id}", s.handlePatchRule)
	write.Delete("/permissions/rules/{id}", s.handleDeleteRule)
	read.Get("/permissions/approval-overrides", s.handleListOverrides)
	write.Post("/permissions/approval-overrides", s.handleAddOverride)
	write.Delete("/permissions/approval-overrides/{id}", s.handleDeleteOverride)
	read.Get("/permissions/external-directory", s.handleGetExternal)
	write.Put("/permissions/external-directory", s.handlePutExternal)
	write.Delete("/permissions/external-directory", s.handleDeleteExternal)
	read.Get("/permissions/owner-scopes", s.handleGetOwners)
	write.Put("/permissions/owner-scopes", s.handlePutOwners)
	read.Get("/permissions/builtin-rules", s.handleBuiltinRules)
	read.Post("/permissions/validate", s.handleValidate)
	write.Get("/tokens", s.handleListTokens)
	write.Post("/tokens", s.handleCreateToken)
	write.Delete("/tokens/{id}", s.handleRevokeToken)
	read.Post("/commands", s.handleCommand)
}

// section returns the section in force, never nil.
func (s *Server) section() (map[string]any, string, error) {
	sec, etag, err := s.deps.Store.Section()
	if sec == nil {
		sec = map[string]any{}
	}
	return sec, etag, err
}

// setETag sets the ETag header of the section.
func setETag(w http.ResponseWriter, etag string) {
	if etag != "" {
		w.Header().Set("ETag", `"`+etag+`"`)
	}
}

// handleGetSection is GET /api/v1/permissions: the whole section, with its ETag.
func (s *Server) handleGetSection(w http.ResponseWriter, r *http.Request) {
	sec, etag, err := s.section()
	if err != nil {
		writeError(w, r, err)
		return
	}
	setETag(w, etag)
	writeJSON(w, http.StatusOK, sec)
}

// handlePutSection is PUT /api/v1/permissions: replace the section; with
// If-Match, only when it has not changed since that ETag (else 412).
func (s *Server) handlePutSection(w http.ResponseWriter, r *http.Request) {
	var sec map[string]any
	if err := decodeJSON(w, r, &sec); err != nil {
		writeError(w, r, err)
		return
	}
	if sec == nil {
		writeError(w, r, badRequest("", "the body must be a JSON object (the permissions section)"))
		return
	}
	if err := checkSection(sec); err != nil {
		writeError(w, r, err)
		return
	}
	etag, err := s.deps.Store.ReplaceSection(sec, r.Header.Get("If-Match"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.respondSection(w, r, etag)
}

// respondSection answers a write with the section now in force.
func (s *Server) respondSection(w http.ResponseWriter, r *http.Request, etag string) {
	sec, _, err := s.section()
	if err != nil {
		writeError(w, r, err)
		return
	}
	setETag(w, etag)
	writeJSON(w, http.StatusOK, sec)
}
