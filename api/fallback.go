package api

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/service"
)

// IsAPIPath reports whether a path belongs to the API rather than the pages:
// everything under /api/ and the JSON-RPC endpoint. Clients of those paths
// read JSON, so even a path no route has answers in the API's error shape.
func IsAPIPath(path string) bool {
	return strings.HasPrefix(path, "/api/") || path == "/api" || path == "/rpc"
}

// NotFound answers an API path that no route has with a JSON 404 in the
// API's error shape, naming the method and path.
func NotFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, &service.Error{Kind: service.KindNotFound, Code: service.CodeNotFound,
		Message: "no API route " + r.Method + " " + r.URL.Path})
}

// MethodNotAllowed answers an API path that exists but not for this method
// with a JSON 405.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, &service.Error{Kind: service.KindMethodNotAllowed, Code: service.CodeMethodNotAllowed,
		Message: "method " + r.Method + " is not allowed on " + r.URL.Path})
}

// Fallback returns a handler that answers API paths with h and every other
// path with other: the router's not-found and method-not-allowed handlers
// are shared by the pages and the API.
func Fallback(apiHandler, other http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if IsAPIPath(r.URL.Path) {
			apiHandler(w, r)
			return
		}
		other(w, r)
	}
}
