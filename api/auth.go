package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

// SessionAuthenticator checks a browser session (the web package's cookie).
type SessionAuthenticator interface {
	SessionPrincipal(r *http.Request) (auth.Principal, bool)
}

type principalKey struct{}

// PrincipalFrom returns the authenticated principal of a request.
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// writeThrottled refuses a client that failed to authenticate too often.
//
// The answer comes after auth.ThrottlePause, so that one connection
// guesses at most a couple of tokens a second.
func writeThrottled(w http.ResponseWriter, r *http.Request, left time.Duration) {
	select {
	case <-time.After(auth.ThrottlePause):
	case <-r.Context().Done():
		return
	}
	secs := int(left.Seconds()) + 1
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, r, &service.Error{Kind: service.KindTooMany, Code: CodeThrottled,
		Message: fmt.Sprintf("too many failed attempts from this address; try again in %d s", secs)})
}

// CodeThrottled is the error code of a throttled client.
const CodeThrottled = "throttled"

// principalToken is the id of the request's token ("" without one).
func principalToken(r *http.Request) string {
	p, _ := PrincipalFrom(r.Context())
	return p.TokenID
}

// WithPrincipal stores a principal in a context.
func WithPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// authenticate requires a valid bearer token or browser session. A
// cookie-authenticated request that changes something must also pass Go's
// cross-origin protection, since a browser sends cookies cross-site.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := auth.BearerToken(r.Header.Get("Authorization")); ok {
			p, valid := s.deps.Tokens.Verify(tok)
			if !valid {
				// A valid token always passes, so the rightful admin is never
				// locked out; a client over its failures is slowed.
				client := auth.ClientOf(r)
				if left, blocked := s.throttle.Blocked(client); blocked {
					writeThrottled(w, r, left)
					return
				}
				s.throttle.Failed(client)
				writeError(w, r, &service.Error{Kind: service.KindUnauthenticated, Code: service.CodeUnauthorized, Message: "invalid token"})
				return
			}
			next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
			return
		}
		if s.deps.Sessions != nil {
			if p, ok := s.deps.Sessions.SessionPrincipal(r); ok {
				if err := s.csrf.Check(r); err != nil {
					writeError(w, r, &service.Error{Kind: service.KindForbidden, Code: service.CodeForbidden, Message: "cross-origin request refused", Cause: err})
					return
				}
				next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
				return
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate"`)
		writeError(w, r, &service.Error{Kind: service.KindUnauthenticated, Code: service.CodeUnauthorized, Message: "missing bearer token"})
	})
}

// require lets a request through only when its principal has the right
// (service.Allowed, the one table of roles and rights).
func require(right service.Right) func(http.Handler) http.Handler {
	return requireAny(right)
}

// requireAny lets a request through when its principal has any of the rights.
func requireAny(rights ...service.Right) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := PrincipalFrom(r.Context())
			for _, right := range rights {
				if service.Allowed(p.Role, right) {
					next.ServeHTTP(w, r)
					return
				}
			}
			writeError(w, r, service.Require(p, rights[0]))
		})
	}
}
